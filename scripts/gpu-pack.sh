#!/bin/bash
# Stages what the GPU machine cannot build (it has CUDA but no LLVM, libbpf or ANTLR): a release
# gpubt with LLVM, libbpf, libelf and antlr4-runtime linked statically, stripped, in
# .carry/gpubt/ (libfmt beside it in lib/), plus zstd's headers for the agent's build there, and
# the Vulkan layer with its test program in .carry/vulkan/ (the GPU machine has neither Vulkan
# headers nor SPIRV-Tools nor glslang), and Debian's prometheus as .carry/prometheus.xz. scripts/gpu-e2e.sh picks them up from there.
# Usage: scripts/gpu-pack.sh [BUILD_DIR=build-static]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build-static}
# RelWithDebInfo (stripped below) as scripts/setup.sh builds: with ccache the two builds share
# every object but the link.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUBT_STATIC_LLVM=ON \
  "${launcher[@]}" >/dev/null
ninja -C "$BUILD" gpubt
# The layer and vk_vector_add exist where libvulkan-dev, spirv-tools and glslang are installed.
vulkan_targets=$(ninja -C "$BUILD" -t targets all | grep -oE '^(gpubt_vulkan_layer|vk_vector_add):' |
  tr -d : | xargs)
if [ -n "$vulkan_targets" ]; then
  ninja -C "$BUILD" $vulkan_targets
  mkdir -p "$ROOT/.carry/vulkan"
  cp "$BUILD/runtime/vulkan/libgpubt_vulkan_layer.so" "$BUILD/runtime/vulkan/gpubt_vulkan_layer.json" \
    "$BUILD/tests/programs/vk_vector_add" "$BUILD/tests/programs/vector_add.spv" "$ROOT/.carry/vulkan/"
  strip "$ROOT/.carry/vulkan/libgpubt_vulkan_layer.so" "$ROOT/.carry/vulkan/vk_vector_add"
  # entry_points.spv (run_vulkan.py's entry point cases): built where spirv-as is.
  if [ -f "$BUILD/tests/programs/entry_points.spv" ]; then
    cp "$BUILD/tests/programs/entry_points.spv" "$ROOT/.carry/vulkan/"
  fi
fi
mkdir -p "$ROOT/.carry/gpubt/lib"
strip -o "$ROOT/.carry/gpubt/gpubt" "$BUILD/gpubt"
for lib in $(ldd "$BUILD/gpubt" | awk '/libfmt/ {print $3}'); do
  cp -L "$lib" "$ROOT/.carry/gpubt/lib/"
done
# The agent is built there and links libzstd.so.1, which may come without its headers.
mkdir -p "$ROOT/.carry/zstd-include"
cp /usr/include/zstd.h /usr/include/zstd_errors.h "$ROOT/.carry/zstd-include/"
# A Prometheus server for gpu-e2e.sh --nccl and --ml (the GPU machine has none and reaches no network),
# xz'd: 50 MB as it is, 10 MB so, which keeps .carry under the device's 64 MiB.
if prom=$(command -v prometheus) && [ ! "$ROOT/.carry/prometheus.xz" -nt "$prom" ]; then
  xz -9e -T2 -c "$prom" >"$ROOT/.carry/prometheus.xz"
fi
grep -qx '/.carry/' "$ROOT/.gitignore" || echo "WARNING: .carry/ is not ignored"
du -sh "$ROOT/.carry/gpubt" "$ROOT/.carry"
