#!/bin/bash
# Issue 5's benchmark on a GPU machine: vectorAdd over 2^26 floats, plain vs --gpu-backend=ptx vs
# --gpu-backend=sass vs hand-written counting, then module load cost (bench/gpu/ptx_bench.py).
# Usage: bench/gpu/ptx_bench.sh [ptx_bench.py options]   (env: GPUBT, GPUBT_AGENT_PATH, WORK)
#        bench/gpu/ptx_bench.sh --mem [mem_bench.py options]: issue 28's cost row instead, every
#        global access counted with gpu:mem:global, PTX and SASS against plain.
# scripts/gpu-e2e.sh --ptx-bench runs it after the suite, reusing its agent and programs.
set -uo pipefail
BENCH=ptx_bench.py
if [ "${1:-}" = --mem ]; then
  BENCH=mem_bench.py
  shift
fi
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "[SKIP] no GPU"
  exit 0
fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${WORK:-/tmp/gpubt-gpu}
CUDA=${CUDA_HOME:-/usr/local/cuda}
export PATH=$CUDA/bin:$PATH
GPUBT=${GPUBT:-}
if [ -z "$GPUBT" ] && [ -x "$ROOT/.carry/gpubt/gpubt" ]; then
  GPUBT=$ROOT/.carry/gpubt/gpubt
  export LD_LIBRARY_PATH=$ROOT/.carry/gpubt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
if [ -z "$GPUBT" ] || ! "$GPUBT" --version >/dev/null 2>&1; then
  echo "ptx_bench: no runnable gpubt (${GPUBT:-none}); set GPUBT or run scripts/gpu-pack.sh" >&2
  exit 1
fi
AGENT=${GPUBT_AGENT_PATH:-$WORK/agent/cuda_agent/libgpubt_agent.so}
if [ ! -f "$AGENT" ]; then
  cmake -S "$ROOT/runtime" -B "$WORK/agent" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
    cmake --build "$WORK/agent" -j >/dev/null || exit 1
fi
ARCH=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
B=$WORK/bin T=$ROOT/tests/gpu
mkdir -p "$B"
[ -x "$B/vectorAdd" ] || nvcc -O2 -arch=$ARCH "$T/vector_add.cu" -o "$B/vectorAdd" || exit 1
[ "$B/vectorAdd_counted" -nt "$T/vector_add_counted.cu" ] ||
  nvcc -O2 -arch=$ARCH "$T/vector_add_counted.cu" -o "$B/vectorAdd_counted" || exit 1
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader | head -1
echo "gpubt: $GPUBT ($("$GPUBT" --version 2>&1 | head -1)); agent: $AGENT"
python3 "$ROOT/bench/gpu/$BENCH" --bin "$B" --gpubt "$GPUBT" --agent "$AGENT" "$@"
