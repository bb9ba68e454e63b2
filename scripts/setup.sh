#!/usr/bin/env bash
# Installs the Debian 12 packages gpubt needs to build and test (only those missing), then builds.
# Usage: scripts/setup.sh [--no-build]     Build dir: build/ (override with GPUBT_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config python3
  llvm-22-dev                          # BPF and NVPTX back ends, in-process (no clang at run time)
  libclang-22-dev                      # scripts' C definitions: struct layouts, #include, #define
  libbpf-dev libelf-dev zlib1g-dev libzstd-dev
  libdw-dev                            # DWARF of traced binaries: uprobe args->NAME, struct types
  antlr4 libantlr4-runtime-dev default-jre-headless
  libfmt-dev googletest libgtest-dev
  bpftrace                             # the reference the differential tests compare against
  systemtap-sdt-dev                    # sys/sdt.h: USDT probes in test programs (conformance harness)
  hipcc libamdhip64-dev                # a HIP test program (no AMD GPU needed to build or run it)
  prometheus                           # promtool and a server: the --metrics tests' consumers
  libvulkan-dev spirv-tools            # the Vulkan layer (gpu probes in compute shaders), SPIR-V linker
  mesa-vulkan-drivers vulkan-tools     # lavapipe: Vulkan on the CPU, where CI runs the Vulkan tests
  glslang-tools clang-22               # Vulkan test shaders (GLSL), OpenCL C kernels as SPIR-V
)
# npm: the --timeline tests import traces with speedscope (scripts/setup-trace-viewer.sh).
# A Node from elsewhere (nodesource) brings its own npm; Debian's otherwise.
command -v npm >/dev/null || packages+=(nodejs npm)

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# NCCL: tests/e2e/cases/nccl.test traces the real libnccl.so.2 (its calls fail without a GPU but
# are made). CUDA's wheels bring it (nvidia-nccl-cu13, beside /usr/local/cuda's libraries); where
# ld.so cannot find one, pip's copy goes under /usr/local/lib/gpubt-nccl and ld.so learns of it.
if [ -d /usr/local/cuda ] && ! /sbin/ldconfig -p | grep -q 'libnccl\.so\.2 '; then
  nccl_dir=/usr/local/lib/gpubt-nccl
  if as_root python3 -m pip install -q --target "$nccl_dir" nvidia-nccl-cu13; then
    echo "$nccl_dir/nvidia/nccl/lib" | as_root tee /etc/ld.so.conf.d/gpubt-nccl.conf >/dev/null
    as_root ldconfig
  else
    echo "setup: no libnccl.so.2 (pip install nvidia-nccl-cu13 failed): the NCCL tests will skip"
  fi
fi

[ "${1:-}" = "--no-build" ] && exit 0
build=${GPUBT_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$build" -j"$(nproc)"
scripts/setup-trace-viewer.sh "$build/trace-viewer"
