#!/bin/bash
# The whole GPU suite in one go, on a machine with an NVIDIA GPU and the CUDA toolkit (nvcc,
# ptxas, the Compute Sanitizer SDK): builds libgpubt_agent.so and the test programs there, runs
# tests/gpu/run_suite.py and prints a pass/fail table. gpubt itself needs LLVM/libbpf: pass a
# prebuilt one (scripts/gpu-pack.sh stages a static one in .carry/) or the gpubt cases are skipped.
# Usage: scripts/gpu-e2e.sh [--timings] [--torch] [--ml] [--no-suite] [--ptx-bench]
#                           [--latency-bench] [--train-bench] [--attach] [--timeline]
#                           [--vulkan] [--vulkan-bench] [--nccl]
#        (env: GPUBT=path, WORK=build folder, ML_ONLY=regex of ML workloads, ML_OUTPUTS=file,
#         ATTACH_ARGS=more attach_suite.py options, TRAIN_ONLY/TRAIN_ROUNDS/TRAIN_STEPS: train_cost.py)
# --ptx-bench: after the suite, bench/gpu/ptx_bench.sh (issue 5's PTX vs SASS vs hand-written table).
# --latency-bench: after the suite, bench/gpu/launch_latency.py (what gpubt adds to launch latency).
# --ml: tests/gpu/ml_suite.py (PyTorch eager/compile/graphs, Triton, JAX, CuPy, cuBLAS, streams;
#   live_maps with a real Prometheus, .carry/prometheus.xz, scraping --metrics).
# --train-bench: bench/gpu/train_cost.py (a transformer training step plain vs traced).
# --tool-cost: bench/gpu/tool_cost_paired.py (kerneltime, launchlate, --timeline under -c and -p
#   in long-lived twins of the training step, eager and compiled; TOOL_COST_ARGS: its options).
# --attach: tests/gpu/attach_suite.py (gpubt -p / system-wide on running trainers, issue 13).
# --timeline: tests/gpu/timeline_check.py (--timeline over the PyTorch training step against
#   tools/kerneltime.bt; the trace goes to $TIMELINE_OUT, default bench/gpu/logs/).
# --vulkan: tests/vulkan/run_vulkan.py on the GPU's Vulkan driver (issue 15), with the layer and
#   vk_vector_add that scripts/gpu-pack.sh stages in .carry/vulkan and the loader's .debs in .gl/
#   (the device README's recipe) unpacked when no libvulkan.so.1 is installed.
# --vulkan-bench: bench/gpu/vulkan_bench.py (plain vs `{ }` vs `@ = count()` per dispatch).
# --nccl: tests/gpu/nccl/nccl_suite.py (issue 27; 2 GPUs, PyTorch with NCCL): a DDP job under
#   torchrun traced system-wide by tools/nccl*.bt, judged against its comm hook, with a real
#   Prometheus (.carry/prometheus.xz from scripts/gpu-pack.sh, or one on PATH) querying --metrics;
#   writes nccl_report.txt and nccl_logs.tar.gz to $NCCL_OUT (default $OUT, else $WORK/nccl).
#   Alone with --no-suite it builds nothing here (no agent, no test programs).
# --no-suite: skip tests/gpu/run_suite.py (with --ml or a bench).
# --cases=A,B: after the build, only tests/gpu/run_cases.py's cases A and B instead of the suite
#   (a rerun of what changed; the final run of a tree is the whole suite).
set -uo pipefail
PTX_BENCH=0 LATENCY_BENCH=0 ML=0 TRAIN_BENCH=0 TOOL_COST=0 SUITE=1 ATTACH=0 TIMELINE=0 VULKAN=0 VULKAN_BENCH=0
NCCL=0 CASES=
SUITE_ARGS=()
for arg in "$@"; do
  case "$arg" in
  --ptx-bench) PTX_BENCH=1 ;;
  --latency-bench) LATENCY_BENCH=1 ;;
  --ml) ML=1 ;;
  --attach) ATTACH=1 ;;
  --timeline) TIMELINE=1 ;;
  --vulkan) VULKAN=1 ;;
  --vulkan-bench) VULKAN_BENCH=1 ;;
  --train-bench) TRAIN_BENCH=1 ;;
  --tool-cost) TOOL_COST=1 ;;
  --nccl) NCCL=1 ;;
  --no-suite) SUITE=0 ;;
  --cases=*) CASES=${arg#--cases=} SUITE=0 ;;
  *) SUITE_ARGS+=("$arg") ;;
  esac
done
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "[SKIP] no GPU"
  exit 0
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-/tmp/gpubt-gpu}
CUDA=${CUDA_HOME:-/usr/local/cuda}
export PATH=$CUDA/bin:$PATH
mkdir -p "$WORK/bin"
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader
ARCH=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
NUM=${ARCH#sm_}
# Tracepoints (the NVIDIA driver's Xid event among them): tracefs is not mounted on a bare machine.
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true

# What needs the agent or the test programs built here (--nccl and --vulkan need neither).
[ -n "$CASES" ] && CASE_RUN=1 || CASE_RUN=0
BUILD=$((SUITE | CASE_RUN | ML | ATTACH | TIMELINE | TRAIN_BENCH | TOOL_COST | PTX_BENCH | LATENCY_BENCH))
AGENT=$WORK/agent/cuda_agent/libgpubt_agent.so
B=$WORK/bin T=$ROOT/tests/gpu
if [ "$BUILD" = 1 ]; then
set -e
cmake -S "$ROOT/runtime" -B "$WORK/agent" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$WORK/agent" -j >/dev/null
nvcc -O2 -arch=$ARCH "$T/vector_add.cu" -o "$B/vectorAdd" &
nvcc -O2 -gencode arch=compute_$NUM,code=$ARCH "$T/vector_add.cu" -o "$B/vectorAdd_sass" &
nvcc -O2 -gencode arch=compute_$NUM,code=compute_$NUM "$T/vector_add.cu" -o "$B/vectorAdd_ptx" &
nvcc -O2 -arch=$ARCH "$T/grid3d.cu" -o "$B/grid3d" &
nvcc -O2 -arch=$ARCH "$T/long_names.cu" -o "$B/long_names" &
nvcc -O2 -arch=$ARCH "$T/multi_ctx.cu" -lcuda -o "$B/multi_ctx" &
nvcc -O2 -arch=$ARCH "$T/graph_add.cu" -o "$B/graph_add" &
nvcc -O2 -arch=$ARCH -cubin "$T/multi_ctx.cu" -o "$B/scale.cubin" &
nvcc -O2 -arch=$ARCH -ptx "$T/multi_ctx.cu" -o "$B/scale.ptx" &
nvcc -O2 -arch=$ARCH -cudart shared -Xlinker -rpath,"$CUDA/lib64" "$T/vector_add.cu" \
  -o "$B/vectorAdd_shared" &
nvcc -O2 -arch=$ARCH "$T/nvrtc_module.cu" -lcuda -lnvrtc -Xlinker -rpath,"$CUDA/lib64" \
  -o "$B/nvrtc_module" &
nvcc -O2 -arch=$ARCH "$T/graph_capture.cu" -o "$B/graph_capture" &
nvcc -O2 -arch=$ARCH "$T/device_global.cu" -o "$B/device_global" &
nvcc -O2 -arch=$ARCH "$T/launch_ex.cu" -lcuda -o "$B/launch_ex" &
nvcc -O2 -arch=$ARCH "$T/vector_add_counted.cu" -o "$B/vectorAdd_counted" &
nvcc -O2 -arch=$ARCH "$T/persistent_kernel.cu" -o "$B/persistent_kernel" &
nvcc -O2 -arch=$ARCH "$T/hang_kernel.cu" -o "$B/hang_kernel" &
nvcc -O2 -arch=$ARCH "$T/xid_fault.cu" -o "$B/xid_fault" &
nvcc -O2 -arch=$ARCH "$T/divergence.cu" -o "$B/divergence" &
nvcc -O2 -arch=$ARCH "$T/mem_access.cu" -o "$B/mem_access" &
nvcc -O2 -arch=$ARCH "$ROOT/bench/gpu/experiments/cupti_inflight.cu" -lcupti -lcuda \
  -L"$CUDA/extras/CUPTI/lib64" -Xlinker -rpath,"$CUDA/extras/CUPTI/lib64" -o "$B/cupti_inflight" &
nvcc -arch=$ARCH -ptx -rdc=true -I"$ROOT" "$T/selftest_patch.cu" -o "$B/selftest.ptx"
ptxas -arch=$ARCH --compile-as-tools-patch "$B/selftest.ptx" -o "$B/selftest.cubin"
ARCH=$ARCH B=$B "$ROOT/scripts/gpu-build-issue6.sh"
wait
set +e
# Objects built without PTX must have none (and the PTX-only one no SASS), or the case is moot.
cuobjdump -lptx "$B/vectorAdd_sass" 2>&1 | grep -q ptx && echo "WARNING: vectorAdd_sass has PTX"
cuobjdump -lelf "$B/vectorAdd_ptx" 2>&1 | grep -q elf && echo "WARNING: vectorAdd_ptx has SASS"
fi

GPUBT=${GPUBT:-}
if [ -z "$GPUBT" ] && [ -x "$ROOT/.carry/gpubt/gpubt" ]; then
  GPUBT=$ROOT/.carry/gpubt/gpubt
  export LD_LIBRARY_PATH=$ROOT/.carry/gpubt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
ARGS=(--bin "$B" --agent "$AGENT" --selftest-cubin "$B/selftest.cubin" ${SUITE_ARGS[@]+"${SUITE_ARGS[@]}"})
if [ -n "$GPUBT" ] && "$GPUBT" --version >/dev/null 2>&1; then
  ARGS+=(--gpubt "$GPUBT")
else
  echo "no runnable gpubt (${GPUBT:-none}): the gpubt cases are skipped"
fi
RC=0
if [ "$SUITE" = 1 ]; then
  python3 "$T/run_suite.py" "${ARGS[@]}" || RC=1
fi
if [ -n "$CASES" ] && [ -n "$GPUBT" ]; then
  python3 "$T/run_cases.py" --bin "$B" --agent "$AGENT" --gpubt "$GPUBT" --cases "$CASES" || RC=1
fi
# A Prometheus server (--ml's live_maps, --nccl): the one scripts/gpu-pack.sh carries, else PATH's.
PROM=$ROOT/.carry/prometheus.xz
[ -f "$PROM" ] || PROM=$(command -v prometheus || true)
if [ "$ML" = 1 ] && [ -n "$GPUBT" ]; then
  python3 "$T/ml_suite.py" --gpubt "$GPUBT" --agent "$AGENT" --only "${ML_ONLY:-}" \
    ${ML_OUTPUTS:+--outputs "$ML_OUTPUTS"} ${PROM:+--prometheus "$PROM"} || RC=1
  # Issue 25: launch-level probes' kernel durations against the PyTorch profiler's.
  GPUBT_AGENT_PATH=$AGENT python3 "$T/kernel_time_check.py" --gpubt "$GPUBT" || RC=1
  # Issue 30's README example: which lines of a training step block on device syncs (shown,
  # not judged: ml_suite.py's pystack cases judge the attribution).
  echo "== gpubt -c 'python3 tests/gpu/ml/pystack_step.py' tools/pysyncstall.bt"
  GPUBT_AGENT_PATH=$AGENT timeout 120 "$GPUBT" -c "python3 $T/ml/pystack_step.py" \
    "$ROOT/tools/pysyncstall.bt" 2>&1 | grep -v '^truth ' | tail -40
fi
if [ "$ATTACH" = 1 ] && [ -n "$GPUBT" ]; then
  # From a node install (docs/deploy.md): the agent installed from its build, gpubt
  # beside it, found by gpubt without GPUBT_AGENT_PATH.
  PREFIX=$WORK/prefix
  rm -rf "$PREFIX" && cmake --install "$WORK/agent" --prefix "$PREFIX" >/dev/null &&
    install -D -m 755 "$GPUBT" "$PREFIX/bin/gpubt" || RC=1
  python3 "$T/attach_suite.py" --gpubt "$PREFIX/bin/gpubt" --bin "$B" \
    --agent "$PREFIX/lib/gpubt/libgpubt_agent.so" ${ATTACH_ARGS:-} || RC=1
fi
if [ "$TIMELINE" = 1 ] && [ -n "$GPUBT" ]; then
  GPUBT_AGENT_PATH=$AGENT python3 "$T/timeline_check.py" --gpubt "$GPUBT" \
    ${TIMELINE_OUT:+--out "$TIMELINE_OUT"} || RC=1
fi
if [ "$TOOL_COST" = 1 ] && [ -n "$GPUBT" ]; then
  python3 "$ROOT/bench/gpu/tool_cost_paired.py" --gpubt "$GPUBT" --agent "$AGENT" \
    ${TOOL_COST_ARGS:-} || RC=1
fi
if [ "$TRAIN_BENCH" = 1 ] && [ -n "$GPUBT" ]; then
  python3 "$ROOT/bench/gpu/train_cost.py" --gpubt "$GPUBT" --agent "$AGENT" \
    --rounds "${TRAIN_ROUNDS:-2}" --only "${TRAIN_ONLY:-}" --bench-steps "${TRAIN_STEPS:-30}"
fi
if { [ "$VULKAN" = 1 ] || [ "$VULKAN_BENCH" = 1 ]; } && [ -n "$GPUBT" ]; then
  VK=$ROOT/.carry/vulkan
  if ! ldconfig -p | grep -q libvulkan.so.1 && [ -d "$ROOT/.gl" ]; then
    for f in "$ROOT"/.gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
  fi
  for icd in /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json \
    /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; do
    [ -f "$icd" ] && export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd && break
  done
  export GPUBT_VULKAN_LAYER_DIR=$VK
  if [ ! -x "$VK/vk_vector_add" ]; then
    echo "[FAIL] vulkan: no .carry/vulkan (run scripts/gpu-pack.sh where libvulkan-dev is)"
    RC=1
  else
    if [ "$VULKAN" = 1 ]; then
      python3 "$ROOT/tests/vulkan/run_vulkan.py" --gpubt "$GPUBT" --programs "$VK" || RC=1
    fi
    if [ "$VULKAN_BENCH" = 1 ]; then
      python3 "$ROOT/bench/gpu/vulkan_bench.py" --programs "$VK" --gpubt "$GPUBT" \
        --layer-dir "$VK" ${VK_DRIVER_FILES:+--icd "$VK_DRIVER_FILES"} || RC=1
    fi
  fi
fi
if [ "$NCCL" = 1 ] && [ -n "$GPUBT" ]; then
  NCCL_OUT=${NCCL_OUT:-${OUT:-$WORK/nccl}}
  timeout -k 10 280 python3 "$T/nccl/nccl_suite.py" --gpubt "$GPUBT" --out "$NCCL_OUT" \
    ${PROM:+--prometheus "$PROM"} || RC=1
fi
if [ "$PTX_BENCH" = 1 ]; then
  GPUBT=$GPUBT GPUBT_AGENT_PATH=$AGENT WORK=$WORK "$ROOT/bench/gpu/ptx_bench.sh"
fi
if [ "$LATENCY_BENCH" = 1 ] && [ -n "$GPUBT" ]; then
  python3 "$ROOT/bench/gpu/launch_latency.py" --bin "$B" --gpubt "$GPUBT" --agent "$AGENT"
fi
exit $RC
