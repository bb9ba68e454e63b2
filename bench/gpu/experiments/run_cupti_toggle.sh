#!/bin/bash
# Runs cupti_toggle.cu (see its header) plain, under the dormant agent and under gpubt -c with gpu
# probes on its kernels (the Sanitizer patching them), then event_timing.cu. On a GPU machine,
# after scripts/gpu-pack.sh (gpubt from .carry/gpubt). Usage: run_cupti_toggle.sh [LAUNCHES]
set -uo pipefail
source "$(dirname "$0")/experiment_env.sh"
N=${1:-20000}
CUPTI=-L/usr/local/cuda/extras/CUPTI/lib64
export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:$ROOT/.carry/gpubt/lib:${LD_LIBRARY_PATH:-}
for p in cupti_toggle event_timing; do
  nvcc -O2 -arch="$ARCH" "$ROOT/bench/gpu/experiments/$p.cu" -I/usr/local/cuda/extras/CUPTI/include \
    $CUPTI -lcupti -lcuda -o "$WORK/$p" 2>&1 | grep -v deprecated
done
echo "== no agent"
timeout 60 "$WORK/cupti_toggle" "$N"
echo "== dormant agent"
CUDA_INJECTION64_PATH=$AGENT timeout 60 "$WORK/cupti_toggle" "$N"
echo "== gpubt -c, gpu:kprobe:k_* (Sanitizer patches)"
GPUBT_AGENT_PATH=$AGENT timeout 120 "$GPUBT" -c "$WORK/cupti_toggle $N" \
  -e 'gpu:kprobe:k_* /tid == 0/ { @[kernel] = count(); }'
echo "== event_timing"
timeout 60 "$WORK/event_timing" 200 | tail -3
echo "== sanitizer_cupti_switch (the callback slot handed from the Sanitizer to CUPTI and back)"
SAN=/usr/local/cuda/compute-sanitizer
nvcc -O2 -arch="$ARCH" "$ROOT/bench/gpu/experiments/sanitizer_cupti_switch.cu" -I$SAN/include \
  -I/usr/local/cuda/extras/CUPTI/include $CUPTI -L$SAN -Xlinker -rpath=$SAN -lsanitizer-public \
  -lcupti -lcuda -o "$WORK/sanitizer_cupti_switch" 2>&1 | grep -v deprecated
timeout 60 "$WORK/sanitizer_cupti_switch" 1000
echo "== FINALIZE=1"
FINALIZE=1 timeout 60 "$WORK/sanitizer_cupti_switch" 1000
echo "== ORDER=cupti-first"
ORDER=cupti-first timeout 60 "$WORK/sanitizer_cupti_switch" 1000
echo "== ORDER=cupti-first FINALIZE=1"
ORDER=cupti-first FINALIZE=1 timeout 60 "$WORK/sanitizer_cupti_switch" 1000
