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

# What a pasted probe costs the kernel it is in: vectorAdd's registers (ptxas -v, sm_90) with each
# probe pasted at its entry or before each of its global accesses (bench/gpu/ptx_instrument.cpp,
# the PTX backend's own pasting). Registers bound occupancy: vectorAdd, memory-bound, hides its
# latency with resident warps (blocks of 256: 65536 / (256 x registers) blocks an SM).
INSTRUMENT=${INSTRUMENT:-$ROOT/build/ptx_instrument}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$INSTRUMENT" ] && [ -x "$NVCC" ] || { echo "[SKIP] no $INSTRUMENT or nvcc"; exit 0; }
"$NVCC" -arch=sm_90 -ptx -O2 "$ROOT/tests/gpu/vector_add.cu" -o "$dir/va.ptx" || exit 1
kernel=$(grep -o '_Z9vectorAdd[A-Za-z0-9_]*' "$dir/va.ptx" | head -1)
regs() { "$PTXAS" -arch=sm_90 -v -o "$dir/k.cubin" "$1" 2>&1 |
  grep -A3 "entry function '$kernel'" | grep -o 'Used [0-9]* registers' | grep -o '[0-9]*'; }
echo
echo "| probe pasted into vectorAdd | vectorAdd's registers (plain: $(regs "$dir/va.ptx")) |"
echo "|---|---|"
for probe in 'gpu:kprobe:vectorAdd { @ = count(); }' 'gpu:kprobe:vectorAdd { @[kernel] = count(); }' \
  'gpu:mem:global:vectorAdd { }' 'gpu:mem:global:vectorAdd { @ = count(); }' \
  'gpu:mem:global:vectorAdd { @[kernel] = count(); }'; do
  where=entry
  [[ $probe == gpu:mem* ]] && where=memory
  "$GPUBT" --emit=ptx "$@" -e "$probe" >"$dir/p.ptx" 2>/dev/null &&
    "$INSTRUMENT" "$dir/va.ptx" "$dir/p.ptx" "$kernel" $where >"$dir/i.ptx" &&
    echo "| \`$probe\` | $(regs "$dir/i.ptx") |"
done
