#!/bin/bash
# Issue 3's overhead table: per-call cost of cudaLaunchKernel, cudaMalloc+cudaFree and
# cudaMemcpy, untraced vs under tools/cudaevents.bt (output to a file), side by side, 3 runs
# each, medians. Run on a GPU machine: bench/gpu/api_cost.sh GPUBT [N]
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GPUBT=$1
N=${2:-20000}
WORK=$(mktemp -d)
nvcc -O2 -o "$WORK/cuda_api_cost" "$ROOT/bench/gpu/cuda_api_cost.cu"
run() { # label, command...
  local label=$1
  shift
  for i in 1 2 3; do
    "$@" 2>"$WORK/stderr.txt" | grep '^API_COST' | sed "s/^/$label /"
    [ "${PIPESTATUS[0]}" = 0 ] || { echo "$label run $i failed:" >&2; tail -5 "$WORK/stderr.txt" >&2; }
  done
}
{
  run plain "$WORK/cuda_api_cost" "$N"
  run cudaevents "$GPUBT" -o "$WORK/events.txt" -c "$WORK/cuda_api_cost $N" "$ROOT/tools/cudaevents.bt"
} > "$WORK/raw.txt"
python3 - "$WORK/raw.txt" <<'PY'
import statistics, sys, collections
v = collections.defaultdict(list)
for line in open(sys.argv[1]):
    label, _, call, ns = line.split()
    v[(label, call)].append(float(ns))
calls = sorted({c for _, c in v})
print("| call | untraced (ns/call) | cudaevents.bt (ns/call) | added (us/call) |")
print("|---|---|---|---|")
for c in calls:
    p, t = statistics.median(v[("plain", c)]), statistics.median(v[("cudaevents", c)])
    print(f"| {c} | {p:.0f} | {t:.0f} | {(t - p) / 1000:.2f} |")
PY
echo "events written by cudaevents.bt: $(wc -l < "$WORK/events.txt") lines"
