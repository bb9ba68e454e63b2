#!/bin/bash
# The size of each ptx_bench.py probe, no GPU needed: gpubt's PTX for the probe's direct form
# (what the PTX backend pastes), its PTX instructions, and ptxas's SASS for sm_90 (instructions =
# .text bytes / 16; spills from -v) as a Compute Sanitizer patch (SASS backend) and as a
# relocatable function (ptxas reports no registers for a function). Static counts: the cached
# and searched paths together; the path one update takes is in the PTX (--emit=ptx).
# Usage: bench/gpu/probe_size.sh [GPUBT] [extra gpubt options]   (needs ptxas and readelf)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GPUBT=${1:-$ROOT/build/gpubt}
shift $(($# > 0 ? 1 : 0))
PTXAS=${PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
[ -x "$PTXAS" ] || { echo "[SKIP] no ptxas"; exit 0; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fn=gpubt_probe_0_direct
echo "| probe body | PTX instructions | SASS as a patch (instructions, spill bytes) | SASS as a function |"
echo "|---|---|---|---|"
for body in '@ = count();' '@[kernel] = count();' '@[tid % 1024] = count();' \
  '@[bid_x] = count();' '@h = hist(clock);'; do
  if ! "$GPUBT" --emit=ptx "$@" -e "gpu:kretprobe:vectorAdd { $body }" >"$dir/p.ptx" 2>"$dir/err"; then
    echo "| \`$body\` | $(head -1 "$dir/err") | | |"
    continue
  fi
  ptx=$(awk -v f="$fn(" 'index($0, f) {on = 1} on && /^}/ {exit} on' "$dir/p.ptx" |
    grep -cE '^\s+(@%p[0-9]+ )?[a-z]+[.a-z0-9]*\s')
  row="| \`$body\` | $ptx |"
  for mode in --compile-as-tools-patch -c; do
    "$PTXAS" -arch=sm_90 $mode -v -o "$dir/p.cubin" "$dir/p.ptx" >"$dir/log" 2>&1
    bytes=$(readelf -SW "$dir/p.cubin" 2>/dev/null | awk -v s=".text.$fn" '$2 == s {print $6}')
    spill=$(grep -A1 "Function properties for $fn\$" "$dir/log" | grep -o '[0-9]* bytes spill stores' |
      grep -o '^[0-9]*')
    instr=$((16#${bytes:-0} / 16))
    if [ "$mode" = -c ]; then row="$row $instr |"; else row="$row $instr, ${spill:-?} |"; fi
  done
  echo "$row"
done
