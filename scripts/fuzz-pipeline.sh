#!/bin/sh
# Builds gpubt with ASan+UBSan in build-asan and runs the whole-pipeline mutation fuzzer
# (tests/fuzz/fuzz_pipeline.py: parse, check, lower, BPF codegen through `gpubt --dry-run`) for
# N seconds (default 180) on one core; findings land in build-asan/pipeline-findings/.
# Not run in CI: it is slow, and its value is in long runs.
set -eu
secs=${1:-180}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-asan
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S "$root" -B "$build" -G Ninja -DGPUBT_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
nice -n 19 ninja -C "$build" gpubt -j"${JOBS:-1}"
exec nice -n 19 python3 "$root/tests/fuzz/fuzz_pipeline.py" --gpubt "$build/gpubt" \
  --seconds "$secs" --findings "$build/pipeline-findings" --seeds "$root/tests/fuzz/corpus" \
  --seeds "$root/tests/fuzz/pipeline-seeds" --seeds "$root/tools" \
  --seeds "$root/tests/e2e/differential"
