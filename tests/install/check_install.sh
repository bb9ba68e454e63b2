#!/usr/bin/env bash
# The node install works from where it lands: `cmake --install` into a prefix and the .tar.gz that
# cpack makes, each run from its own bin/ with nothing of the build around (docs/deploy.md).
# Usage: check_install.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check_tree() { # PREFIX
  local gpubt=$1/bin/gpubt
  [ -x "$gpubt" ] || { echo "FAIL: no $gpubt"; exit 1; }
  [ -f "$1/share/gpubt/tools/kerneltime.bt" ] || { echo "FAIL: no tools in $1/share/gpubt/tools"; exit 1; }
  out=$(cd / && "$gpubt" -e 'BEGIN { printf("installed gpubt runs\n"); exit(); }')
  grep -qx 'installed gpubt runs' <<<"$out" || { echo "FAIL: $gpubt printed: $out"; exit 1; }
  "$gpubt" --dry-run "$1/share/gpubt/tools/kerneltime.bt" || { echo "FAIL: tools do not compile"; exit 1; }
  for tool in "$1"/share/gpubt/tools/*.bt; do # commands of their own: #!/usr/bin/env gpubt
    [ -x "$tool" ] || { echo "FAIL: $tool is not executable"; exit 1; }
  done
  (cd / && PATH=$1/bin:$PATH "$1/share/gpubt/tools/kerneltime.bt" --dry-run) ||
    { echo "FAIL: kerneltime.bt does not run as a command"; exit 1; }
  [ -f "$1/share/man/man8/gpubt.8" ] || { echo "FAIL: no man page in $1/share/man/man8"; exit 1; }
  man -l "$1/share/man/man8/gpubt.8" 2>/dev/null | grep -q 'EXIT STATUS' ||
    { echo "FAIL: the installed man page does not render"; exit 1; }
  [ -f "$1/share/bash-completion/completions/gpubt" ] || { echo "FAIL: no bash completion"; exit 1; }
  env=$("$gpubt" agent env 2>/dev/null)
  grep -q '^export CUDA_INJECTION64_PATH=' <<<"$env" || { echo "FAIL: gpubt agent env: $env"; exit 1; }
  check_vulkan_layer "$1"
  echo "ok: $1"
}
# The Vulkan layer (where the build has one): installed in lib/gpubt/ with a manifest whose
# library_path leads to it, used by the installed gpubt on a real Vulkan program, and, once
# removed, reported as a missing Vulkan layer.
check_vulkan_layer() { # PREFIX
  [ -f "$build/runtime/vulkan/libgpubt_vulkan_layer.so" ] || return 0
  local dir=$1/lib/gpubt gpubt=$1/bin/gpubt
  [ -f "$dir/gpubt_vulkan_layer.json" ] || { echo "FAIL: no $dir/gpubt_vulkan_layer.json"; exit 1; }
  local lib
  lib=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["layer"]["library_path"])' \
    "$dir/gpubt_vulkan_layer.json")
  case $lib in /*) ;; *) lib=$dir/$lib ;; esac
  [ -f "$lib" ] || { echo "FAIL: the manifest's library_path $lib is not there"; exit 1; }
  local prog=$build/tests/programs/vk_vector_add
  if [ -x "$prog" ] && XDG_RUNTIME_DIR=$tmp "$prog" >/dev/null 2>&1; then
    out=$(cd / && XDG_RUNTIME_DIR=$tmp "$gpubt" -e 'gpu:kprobe:main { @ = count(); }' -c "$prog 1000" 2>&1) || true
    grep -qx '@: 1024' <<<"$out" || { echo "FAIL: installed Vulkan layer: $out"; exit 1; }
  else
    echo "note: no Vulkan device here: the installed layer is not run"
  fi
  mkdir "$tmp/layer-aside"
  mv "$dir/gpubt_vulkan_layer.json" "$tmp/layer-aside/"
  local rc=0
  out=$(cd / && "$gpubt" -e 'gpu:kprobe:main { @ = count(); }' -c /bin/true 2>&1) || rc=$?
  mv "$tmp/layer-aside/gpubt_vulkan_layer.json" "$dir/" && rmdir "$tmp/layer-aside"
  [ $rc -ne 0 ] && grep -q 'the Vulkan layer is missing' <<<"$out" ||
    { echo "FAIL: a missing layer (rc $rc): $out"; exit 1; }
}
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
check_tree "$tmp/prefix"
(cd "$build" && cpack -G TGZ -B "$tmp/pkg" >/dev/null)
tarball=$(ls "$tmp"/pkg/gpubt-*.tar.gz)
mkdir "$tmp/untar" && tar xzf "$tarball" -C "$tmp/untar"
check_tree "$(ls -d "$tmp"/untar/gpubt-*)"
if [ -f "$build/runtime/vulkan/libgpubt_vulkan_layer.so" ] && command -v dpkg-deb >/dev/null; then
  (cd "$build" && cpack -G DEB -B "$tmp/deb" >/dev/null 2>&1)
  listing=$(dpkg-deb -c "$(ls "$tmp"/deb/gpubt*.deb)")
  for f in lib/gpubt/libgpubt_vulkan_layer.so lib/gpubt/gpubt_vulkan_layer.json \
      share/man/man8/gpubt.8 share/bash-completion/completions/gpubt; do
    grep -q "/$f\$" <<<"$listing" || { echo "FAIL: the .deb lacks $f"; exit 1; }
  done
  echo "ok: the .deb has the Vulkan layer, the man page and the completion"
fi
echo "install layout: PASS ($(basename "$tarball"))"
