#!/usr/bin/env bash
# Measures gpubt against bpftrace's own runtime tests and bundled tools (issue 14), with gpubt and
# the installed bpftrace each in bpftrace's place. The bpftrace checkout stays outside this repo.
# Usage: scripts/bpftrace-conformance.sh BPFTRACE_CHECKOUT [runner options: --tools gpubt,bpftrace
#        --filter 'call.*' --language --jobs N --out DIR -v]
# A checkout of tag v0.17.0's tests and tools:
#   git --git-dir=BPFTRACE.git archive v0.17.0 tests tools | tar -x -C /tmp/bt017
# or of bpftrace's head, whose case format the runner also reads (issue 29's language measure):
#   git --git-dir=BPFTRACE.git archive HEAD tests tools | tar -x -C /tmp/bthead
#   scripts/bpftrace-conformance.sh /tmp/bthead --tools gpubt --language --no-tools-check
set -euo pipefail
[ $# -ge 1 ] || { sed -n 2,10p "$0" >&2; exit 2; }
checkout=$(realpath "$1"); shift
repo=$(cd "$(dirname "$0")/.." && pwd)
gpubt=${GPUBT:-$repo/build/gpubt}
work=${GPUBT_CONFORMANCE_WORK:-/tmp/gpubt-conformance-work}

# bpftrace's test programs and libraries, built as its CMake builds them (-g -O0, -no-pie).
mkdir -p "$work/testprogs" "$work/testlibs"
sdt=()
if echo '#include <sys/sdt.h>' | cc -E -x c - >/dev/null 2>&1; then sdt=(-DHAVE_SYSTEMTAP_SYS_SDT_H); fi
for src in "$checkout"/tests/testlibs/*.c; do
  name=$(basename "$src" .c)
  out="$work/testlibs/lib$name.so"
  [ "$out" -nt "$src" ] && continue
  # a library of a newer checkout may need headers this machine lacks (bpftrace's libbpf-usdt)
  if cc -g -O0 -fPIC -shared "${sdt[@]}" -I"$checkout/tests/testlibs" -o "$out" "$src" \
      2>"$work/lib$name.build.log"; then
    chmod -x "$out"
  else
    echo "conformance: lib$name did not build (see $work/lib$name.build.log)" >&2
  fi
done
for src in "$checkout"/tests/testprogs/*.c; do
  name=$(basename "$src" .c)
  out="$work/testprogs/$name"
  [ "$out" -nt "$src" ] && continue
  extra=()
  [ "$name" = usdt_lib ] && extra=(-fPIC -I"$checkout/tests/testlibs" -L"$work/testlibs" -lusdt_tp
                                   -Wl,-rpath,"$work/testlibs")
  cc -g -O0 -no-pie "${sdt[@]}" -o "$out" "$src" "${extra[@]}" -lpthread 2>"$work/$name.build.log" ||
    echo "conformance: $name did not build (see $work/$name.build.log)" >&2
done

exec python3 "$repo/tests/conformance/run_bpftrace_suite.py" "$checkout" --work "$work" \
  --gpubt "$gpubt" "$@"
