#!/bin/bash
# Builds the issue 6 GPU programs (clock alignment, late lane, uneven grid, launch queue, kernel
# time) for the GPU suite.
# Called by scripts/gpu-e2e.sh with ARCH (sm_XX) and B (the bin folder) set; runs standalone too:
#   ARCH=sm_90 B=/tmp/bin scripts/gpu-build-issue6.sh
set -euo pipefail
: "${ARCH:?ARCH=sm_XX}" "${B:?B=bin folder}"
T=$(cd "$(dirname "$0")/../tests/gpu" && pwd)
mkdir -p "$B"
pids=()
for prog in clock_align late_lane uneven_grid launch_queue kernel_time gpu_to_host; do
  nvcc -O2 -arch="$ARCH" "$T/$prog.cu" -o "$B/$prog" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
# late_lane's early lanes must leave by their own EXIT, not wait at a reconvergence point for
# lane 31 (then every lane would exit together and kernelretsnoop would see no late lane).
if command -v cuobjdump >/dev/null; then
  exits=$(cuobjdump -sass "$B/late_lane" | grep -c 'EXIT' || true)
  [ "$exits" -ge 2 ] || echo "WARNING: late_lane has $exits EXIT instructions (want >= 2)"
fi
