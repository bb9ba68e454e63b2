#!/usr/bin/env bash
# Installs the trace viewer the --timeline tests import traces with: speedscope 1.25.0 (its own
# Chrome-trace importer, run in Node under jsdom by tests/e2e/timeline/speedscope_import.mjs).
# Cached in DIR (default build/trace-viewer); needs npm, and the npm registry, the first time.
# usage: scripts/setup-trace-viewer.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-${GPUBT_BUILD_DIR:-build}/trace-viewer}
stamp="$dir/.speedscope-1.25.0-jsdom-24.1.3"
[ -f "$stamp" ] && exit 0
if ! command -v npm >/dev/null; then
  echo "setup-trace-viewer: npm is needed (Debian: apt-get install nodejs npm)" >&2
  exit 1
fi
mkdir -p "$dir"
[ -f "$dir/package.json" ] || echo '{"private": true}' > "$dir/package.json"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error speedscope@1.25.0 jsdom@24.1.3
touch "$stamp"
