#!/bin/bash
# Runs cupti_inflight.cu (see its header) plain, under the dormant agent and under gpubt -c with a
# gpu probe on its kernel (the Sanitizer patching it), in each CUPTI mode. On a GPU machine, after
# scripts/gpu-pack.sh (gpubt from .carry/gpubt). Usage: run_cupti_inflight.sh [LAUNCHES]
set -uo pipefail
source "$(dirname "$0")/experiment_env.sh"
N=${1:-20000}
BIN=$WORK/cupti_inflight
nvcc -O2 -arch="$ARCH" "$ROOT/bench/gpu/experiments/cupti_inflight.cu" -lcupti -lcuda \
  -L/usr/local/cuda/extras/CUPTI/lib64 -o "$BIN" || exit 1
export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
for mode in plain memop activity inflight; do
  echo "== $mode: no agent"
  timeout 60 "$BIN" $mode "$N" 2>&1 | grep -v '^inflight' ; timeout 60 "$BIN" $mode 10 2>&1 | grep '^inflight' | sed -n '1p;$p'
  echo "== $mode: dormant agent"
  CUDA_INJECTION64_PATH=$AGENT timeout 60 "$BIN" $mode "$N" 2>&1 | grep -v '^inflight' | tail -4
  echo "== $mode: gpubt -c, gpu:kprobe:tiny (Sanitizer patches, default backend)"
  GPUBT_AGENT_PATH=$AGENT timeout 120 "$GPUBT" -c "$BIN $mode $N" \
    -e 'gpu:kprobe:tiny /tid == 0/ { @tiny = count(); } gpu:kprobe:spin /tid == 0/ { @spin = count(); }' 2>&1 |
    grep -v '^inflight' | tail -8
  echo "== $mode: gpubt -c, sass backend, in-flight lines"
  GPUBT_AGENT_PATH=$AGENT timeout 120 "$GPUBT" --gpu-backend=sass -c "$BIN $mode 10" \
    -e 'gpu:kprobe:spin /tid == 0/ { @spin = count(); }' 2>&1 | sed -n '/^inflight/{p;q}; /^@\|records\|FAIL\|spin blocks/p'
done
