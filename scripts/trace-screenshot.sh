#!/usr/bin/env bash
# Renders a `gpubt --timeline` trace in a real trace viewer, headless, and saves a PNG: speedscope
# 1.25.0 (scripts/setup-trace-viewer.sh) served with the trace on 127.0.0.1, opened by Chromium.
# usage: scripts/trace-screenshot.sh [--track TEXT] [--view VIEW] [--size WxH] [--timeout S]
#                                    TRACE.json OUT.png
#   --track TEXT  show the first track whose name contains TEXT ("GPU", "tid 1234", a kernel's
#                 name); speedscope shows one track at a time, the first one by default
#   --view VIEW   time-ordered (default: the spans in time order), left-heavy or sandwich
#   --size WxH    the window, default 1600x900
#   --timeout S   seconds each of Chromium's two loads may take, default 300 (a 27 MB trace of
#                 200,000 spans needed more than 120 on a busy 2-core machine)
# Chromium (Debian's `chromium`, ~300 MB installed: too big for scripts/setup.sh's CI list) is
# installed here with apt-get the first time when it is missing; CHROMIUM=path picks another.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
track="" view=time-ordered size=1600x900 limit=300
while [ $# -gt 2 ]; do
  case "$1" in
  --track) track=$2; shift 2 ;;
  --view) view=$2; shift 2 ;;
  --size) size=$2; shift 2 ;;
  --timeout) limit=$2; shift 2 ;;
  *) break ;;
  esac
done
if [ $# -ne 2 ]; then
  sed -n 4,11p "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
trace=$1 out=$2
[ -f "$trace" ] || { echo "trace-screenshot: no such trace: $trace" >&2; exit 1; }
case "$view" in time-ordered | left-heavy | sandwich) ;; *)
  echo "trace-screenshot: --view is time-ordered, left-heavy or sandwich, not '$view'" >&2; exit 2 ;;
esac
[[ "$size" =~ ^[0-9]+x[0-9]+$ ]] || { echo "trace-screenshot: --size is WxH, not '$size'" >&2; exit 2; }
[[ "$limit" =~ ^[0-9]+$ ]] || { echo "trace-screenshot: --timeout is seconds, not '$limit'" >&2; exit 2; }

viewer="$repo/${GPUBT_BUILD_DIR:-build}/trace-viewer"
"$repo/scripts/setup-trace-viewer.sh" "$viewer"
release="$viewer/node_modules/speedscope/dist/release"

chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$chromium" ]; then
  echo "trace-screenshot: installing Debian's chromium (once, ~300 MB)" >&2
  as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
  as_root apt-get update -q >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >&2
  chromium=$(command -v chromium)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/gpubt-screenshot-XXXXXX")
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
mkdir "$work/site" "$work/profile"
for f in "$release"/*; do ln -s "$f" "$work/site/"; done
rm "$work/site/index.html"
ln -s "$(cd "$(dirname "$trace")" && pwd)/$(basename "$trace")" "$work/site/trace.json"
ln -s "$repo/scripts/trace-screenshot.js" "$work/site/gpubt-page.js"
# speedscope's own page with scripts/trace-screenshot.js added (why: see there).
python3 - "$release/index.html" "$work/site/index.html" "$track" <<'EOF'
import json, sys
page = open(sys.argv[1]).read()
tag = '<script>window.gpubtTrack = %s;</script><script src="gpubt-page.js"></script>'
open(sys.argv[2], "w").write(page.replace("<head>", "<head>" + tag % json.dumps(sys.argv[3]), 1))
EOF

# Port 0: the server picks a free one and says which.
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$work/site" > "$work/server.log" 2>&1 &
server=$!
port=""
for _ in $(seq 50); do
  port=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$work/server.log" | head -1)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "trace-screenshot: the local server did not start" >&2; cat "$work/server.log" >&2; exit 1; }
url="http://127.0.0.1:$port/index.html#profileURL=trace.json&view=$view"

# speedscope draws with WebGL: --enable-unsafe-swiftshader lets Chromium without a GPU draw it
# in software. Only this page (speedscope and the trace, on 127.0.0.1) is ever loaded.
chrome() {
  local rc=0
  timeout "$limit" "$chromium" --headless=new --no-sandbox --disable-gpu --enable-unsafe-swiftshader \
    --hide-scrollbars --no-first-run --user-data-dir="$work/profile" --window-size="${size/x/,}" \
    --virtual-time-budget=20000 "$@" 2> "$work/chromium.log" || rc=$?
  if [ "$rc" = 124 ]; then
    echo "trace-screenshot: Chromium took over $limit s (a larger --timeout for a large trace)" >&2
  elif [ "$rc" != 0 ]; then
    tail -20 "$work/chromium.log" >&2
  fi
  return "$rc"
}
# The DOM first: speedscope's error page or a missing track is a failure, not a picture of one.
dom=$(chrome --dump-dom "$url") || exit 1
error=$(sed -n 's|.*<title>gpubt: error: \([^<]*\)</title>.*|\1|p' <<< "$dom")
if grep -q "Something went wrong" <<< "$dom" || [ -n "$error" ]; then
  echo "trace-screenshot: speedscope cannot show $trace: ${error:-its import failed}" >&2
  exit 1
fi
chrome --screenshot="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")" "$url" || exit 1
[ -s "$out" ] || { echo "trace-screenshot: chromium wrote no $out" >&2; exit 1; }
echo "trace-screenshot: $out ($view${track:+, track '$track'})"
