#!/usr/bin/env bash
# Sets up, builds and runs every test: unit, codegen (kernel verifier), end to end, and the
# differential suite against bpftrace. Needs root (loads BPF programs).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build=${GPUBT_BUILD_DIR:-build}
scripts/mount-tracefs.sh
ctest --test-dir "$build" --output-on-failure -j1 "$@"
