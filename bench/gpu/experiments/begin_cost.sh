#!/bin/bash
# Does a BEGIN printf beside a launch-level probe cost a training step (bench/RESULTS.md, issue 25)?
# Step time and the CPU of gpubt plus the job, per configuration, interleaved rounds.
# Usage (GPU machine, from the source folder): bench/gpu/experiments/begin_cost.sh GPUBT AGENT [ROUNDS]
G=$1 A=$2 ROUNDS=${3:-3}
export GPUBT_AGENT_PATH=$A
P='gpu:kretprobe:* /last_thread/ { @kernel_us[kernel] = hist((nsecs - launch_start) / 1000); }'
PROG="python3 tests/gpu/ml/train_transformer.py --steps 1 --bench --bench-steps 60"
declare -a NAMES=(plain probe probe+BEGINprintf probe+BEGINmap probe+ENDprintf BEGINprintf-only)
run() {
  case $1 in
  plain) /usr/bin/time -f "cpu %U %S" sh -c "$PROG" ;;
  probe) /usr/bin/time -f "cpu %U %S" $G -e "$P" -c "$PROG" ;;
  probe+BEGINprintf) /usr/bin/time -f "cpu %U %S" $G -e "BEGIN { printf(\"Tracing\\n\"); } $P" -c "$PROG" ;;
  probe+BEGINmap) /usr/bin/time -f "cpu %U %S" $G -e "BEGIN { @b = 1; } $P" -c "$PROG" ;;
  probe+ENDprintf) /usr/bin/time -f "cpu %U %S" $G -e "$P END { printf(\"bye\\n\"); }" -c "$PROG" ;;
  BEGINprintf-only) /usr/bin/time -f "cpu %U %S" $G -e "BEGIN { printf(\"Tracing\\n\"); }" -c "$PROG" ;;
  esac
}
for r in $(seq $ROUNDS); do
  for n in "${NAMES[@]}"; do
    out=$(run $n 2>&1)
    echo "$r $n $(echo "$out" | grep -E '^step_ms' | head -1) $(echo "$out" | grep -E '^cpu' | tail -1)"
  done
done
# what gpubt sets up: -v for the BEGIN variant
$G -v --dry-run -e "BEGIN { printf(\"Tracing\\n\"); } $P" 2>&1 | head -30
