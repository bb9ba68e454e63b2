#!/usr/bin/env bash
# The node install works from where it lands: `cmake --install` into a prefix and the .tar.gz that
# cpack makes, each run from its own bin/ with nothing of the build around (README "Deploy on GPU
# nodes"). Usage: check_install.sh BUILD_DIR
set -euo pipefail
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check_tree() { # PREFIX
  local gpubt=$1/bin/gpubt
  [ -x "$gpubt" ] || { echo "FAIL: no $gpubt"; exit 1; }
  [ -f "$1/share/gpubt/tools/kerneltime.bt" ] || { echo "FAIL: no tools in $1/share/gpubt/tools"; exit 1; }
  out=$(cd / && "$gpubt" -e 'BEGIN { printf("installed gpubt runs\n"); exit(); }')
  grep -qx 'installed gpubt runs' <<<"$out" || { echo "FAIL: $gpubt printed: $out"; exit 1; }
  "$gpubt" --dry-run "$1/share/gpubt/tools/kerneltime.bt" || { echo "FAIL: tools do not compile"; exit 1; }
  env=$("$gpubt" agent env 2>/dev/null)
  grep -q '^export CUDA_INJECTION64_PATH=' <<<"$env" || { echo "FAIL: gpubt agent env: $env"; exit 1; }
  echo "ok: $1"
}
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
check_tree "$tmp/prefix"
(cd "$build" && cpack -G TGZ -B "$tmp/pkg" >/dev/null)
tarball=$(ls "$tmp"/pkg/gpubt-*.tar.gz)
mkdir "$tmp/untar" && tar xzf "$tarball" -C "$tmp/untar"
check_tree "$(ls -d "$tmp"/untar/gpubt-*)"
echo "install layout: PASS ($(basename "$tarball"))"
