#!/bin/bash
# Runs cupti_launch_calls.cu (see its header) in each mode, three interleaved rounds, on a GPU
# machine. Usage: run_cupti_launch_calls.sh [LAUNCHES]
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
WORK=${WORK:-/tmp/gpubt-gpu}
mkdir -p "$WORK"
export PATH=/usr/local/cuda/bin:$PATH
ARCH=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
N=${1:-20000}
CUPTI=/usr/local/cuda/extras/CUPTI
export LD_LIBRARY_PATH=$CUPTI/lib64:${LD_LIBRARY_PATH:-}
nvcc -O2 -arch="$ARCH" "$ROOT/bench/gpu/experiments/cupti_launch_calls.cu" -I$CUPTI/include \
  -L$CUPTI/lib64 -lcupti -lcuda -o "$WORK/cupti_launch_calls" 2>&1 | grep -v deprecated
for round in 1 2 3; do
  echo "== round $round"
  for mode in ${MODES:-none kernel queued runtime driver both after rtkind callback}; do
    timeout 60 "$WORK/cupti_launch_calls" "$mode" "$N"
  done
done
