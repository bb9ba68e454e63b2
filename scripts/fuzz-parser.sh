#!/bin/sh
# Builds the libFuzzer parser target in build-fuzz and runs it for N seconds (default 180)
# from the seed corpus tests/fuzz/corpus; crashes land in build-fuzz/crashes/.
set -eu
secs=${1:-180}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-fuzz
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DGPUBT_FUZZ=ON -DGPUBT_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$build" fuzz_parser -j"${JOBS:-2}"
mkdir -p "$build/corpus" "$build/crashes"
cp -n "$root"/tests/fuzz/corpus/*.bt "$build/corpus/" 2>/dev/null || true
cd "$build"
ASAN_OPTIONS=detect_leaks=1 ./tests/fuzz/fuzz_parser -max_total_time="$secs" -timeout=10 -max_len=4096 \
  -artifact_prefix=crashes/ -print_final_stats=1 corpus
