#!/bin/sh
# Issue 30's cost: the PyTorch training step (tests/gpu/ml/train_transformer.py --bench) plain and
# with a probe that takes a Python stack on every cudaLaunchKernel, interleaved round by round
# in one run (bench/gpu/train_cost.py), ratio of medians beside each; then the ML suite's
# attribution check (the step's syncs and cudaMalloc named by the script's own lines).
# Target: pystack on every launch <= 1.05x (bench/RESULTS.md).
# usage: bench/gpu/pystack_step.sh GPUBT AGENT [ROUNDS]   (on the GPU machine, python3 = 3.12)
set -eu
GPUBT=$1 AGENT=$2 ROUNDS=${3:-5}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# '^$' keeps train_cost's own configurations out: plain and the two below only.
python3 "$ROOT/bench/gpu/train_cost.py" --gpubt "$GPUBT" --agent "$AGENT" --rounds "$ROUNDS" \
  --only '^$' \
  --extra 'uprobe:cudart:cudaLaunchKernel { @[pystack] = count(); }' \
  --extra 'uprobe:cudart:cudaLaunchKernel { @n = count(); }'
GPUBT_AGENT_PATH=$AGENT python3 "$ROOT/tests/gpu/pystack_attribution.py" --gpubt "$GPUBT"
