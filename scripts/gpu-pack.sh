#!/bin/bash
# Stages what the GPU machine cannot build (it has CUDA but no LLVM, libbpf or ANTLR): a release
# gpubt with LLVM, libbpf, libelf and antlr4-runtime linked statically, stripped, in
# .carry/gpubt/ (libfmt beside it in lib/). scripts/gpu-e2e.sh picks it up from there.
# Usage: scripts/gpu-pack.sh [BUILD_DIR=build-static]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build-static}
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUBT_STATIC_LLVM=ON >/dev/null
ninja -C "$BUILD" gpubt
mkdir -p "$ROOT/.carry/gpubt/lib"
strip -o "$ROOT/.carry/gpubt/gpubt" "$BUILD/gpubt"
for lib in $(ldd "$BUILD/gpubt" | awk '/libfmt/ {print $3}'); do
  cp -L "$lib" "$ROOT/.carry/gpubt/lib/"
done
grep -qx '/.carry/' "$ROOT/.gitignore" || echo "WARNING: .carry/ is not ignored"
du -sh "$ROOT/.carry/gpubt"
