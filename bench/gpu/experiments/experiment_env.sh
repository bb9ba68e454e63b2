# Sourced by the run_*.sh experiments: ROOT, WORK, ARCH, the agent built once in $WORK/agent
# (AGENT), gpubt from .carry (GPUBT) and CUPTI's library folder (CUPTI_LIB).
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
WORK=${WORK:-/tmp/gpubt-gpu}
export PATH=/usr/local/cuda/bin:$PATH
ARCH=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ ! -f "$WORK/agent/cuda_agent/libgpubt_agent.so" ]; then
  cmake -S "$ROOT/runtime" -B "$WORK/agent" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
    cmake --build "$WORK/agent" -j >/dev/null
fi
AGENT=$WORK/agent/cuda_agent/libgpubt_agent.so
GPUBT=${GPUBT:-$ROOT/.carry/gpubt/gpubt}
CUPTI_LIB=/usr/local/cuda/extras/CUPTI/lib64
