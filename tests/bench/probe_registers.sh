#!/bin/bash
# What a pasted probe costs its kernel in registers (bench/gpu/probe_size.sh's table, real ptxas):
# an unkeyed count adds at most 8 to vectorAdd's 12, and a kernel-keyed one, whose search path
# makes the key again instead of holding it, stays within 40 (it was 56: half the occupancy).
# usage: probe_registers.sh BUILD_DIR   (77: no ptxas or nvcc)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$1
command -v ptxas >/dev/null || [ -x /usr/local/cuda/bin/ptxas ] || exit 77
command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || exit 77
export PATH=$PATH:/usr/local/cuda/bin
table=$(INSTRUMENT="$BUILD/ptx_instrument" bash "$ROOT/bench/gpu/probe_size.sh" "$BUILD/gpubt")
echo "$table" | tail -8
regs() { echo "$table" | grep -F "| \`$1\` |" | grep -o '| [0-9]* |$' | grep -o '[0-9]*'; }
fail=0
check() {
  local got
  got=$(regs "$1")
  if [ -z "$got" ] || [ "$got" -gt "$2" ]; then
    echo "FAIL: $1: ${got:-no row} registers, at most $2 wanted"
    fail=1
  fi
}
check 'gpu:mem:global:vectorAdd { @ = count(); }' 20
check 'gpu:mem:global:vectorAdd { @[kernel] = count(); }' 40
check 'gpu:kprobe:vectorAdd { @[kernel] = count(); }' 30
exit $fail
