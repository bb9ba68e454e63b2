#!/usr/bin/env bash
# Sets up, builds, and traces a bundled sample program with a small gpubt script.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build=${GPUBT_BUILD_DIR:-build}
app="$build/tests/programs/calls"
script="
uprobe:$app:greet { printf(\"greet(%s)\\n\", str(arg0)); }
uprobe:$app:add   { @calls[arg1] = count(); @sum = sum(arg0); @n++; }
uretprobe:$app:add { @ret = hist(retval); }
END { printf(\"traced %d calls to add()\\n\", @n); }
"
echo "+ gpubt -e '<script>' -c '$app 5'"
exec "$build/gpubt" -e "$script" -c "$app 5"
