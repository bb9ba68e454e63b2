#!/bin/bash
# Issue 3 on a GPU machine: every bundled tool on real CUDA programs (static and shared cudart)
# and on a PyTorch training step, the issue's one-liner, and the per-call cost of cudaevents.bt.
# Usage: scripts/gpu-tools.sh [GPUBT]   (default: the static gpubt staged by scripts/gpu-pack.sh)
set -uo pipefail
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "[SKIP] no GPU"
  exit 0
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
GPUBT=${1:-$ROOT/.carry/gpubt/gpubt}
[ -d "$ROOT/.carry/gpubt/lib" ] && export LD_LIBRARY_PATH=$ROOT/.carry/gpubt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
W=$(mktemp -d)
ARCH=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
for v in static shared; do
  nvcc -O2 -arch=$ARCH -cudart $v -o "$W/cuda_calls_$v" "$ROOT/tests/programs/cuda/cuda_calls.cu" &
done
wait
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null

section() { echo; echo "=== $*"; }
ONE='host:uprobe:cudart:cudaMalloc { @sz[args.size] = count(); } host:uretprobe:cudart:cudaMalloc { @ret[retval] = count(); } host:uprobe:cudart:cudaMemcpy { @kind[args.kind] = count(); } host:uprobe:cudart:cudaLaunchKernel { @launch[kname(args.func)] = count(); }'
for v in static shared; do
  section "issue 3 one-liner, cuda_calls_$v"
  timeout 60 "$GPUBT" -e "$ONE" -c "$W/cuda_calls_$v"
  for t in "$ROOT"/tools/*.bt; do
    section "$(basename "$t"), cuda_calls_$v"
    timeout 60 "$GPUBT" -o "$W/out.txt" -c "$W/cuda_calls_$v" "$t"
    head -60 "$W/out.txt"
  done
done

# PyTorch loads its own libcudart with dlopen after gpubt attached: the tools run unchanged, their
# cudart probes wait for that library and attach when it loads.
for t in "$ROOT"/tools/*.bt; do
  section "$(basename "$t"), PyTorch training step (20 steps)"
  timeout 120 "$GPUBT" -v -o "$W/out.txt" -c "python3 $ROOT/tests/gpu/torch_train_step.py 20" "$t"
  echo "($(wc -l < "$W/out.txt") lines; first and last 25)"
  head -25 "$W/out.txt"; echo ...; tail -25 "$W/out.txt"
done

section "per-call cost of cudaevents.bt"
"$ROOT/bench/gpu/api_cost.sh" "$GPUBT" 20000
