#!/usr/bin/env bash
# The web page in real headless Chromium (tests/server/browser_flow.mjs) against a real server:
#   tests/server/browser_flow.sh FRAMELIFT CLIP OUT_DIR NPM_TARBALL_DIR
# Screenshots land in OUT_DIR (1-login.png, 2-ready.png, 3-done.png, 4-models.png). The server's
# model cache is OUT_DIR/models, filled from the npm tarballs only. Exit 77 (skipped) when
# chromium or node is missing.
set -euo pipefail
framelift=$1 clip=$2 out=$3 tarballs=$4
command -v chromium >/dev/null && command -v node >/dev/null || { echo "chromium or node missing (scripts/setup.sh)"; exit 77; }
# node's WebSocket: built in from Node 22, behind a flag in Node 20.10+, absent before.
node_flags=()
if ! node -e 'typeof WebSocket === "function" || process.exit(1)' 2>/dev/null; then
  node --experimental-websocket -e 'typeof WebSocket === "function" || process.exit(1)' 2>/dev/null ||
    { echo "node $(node --version) has no WebSocket (Node 20.10 or later needed)"; exit 77; }
  node_flags=(--experimental-websocket)
fi
rm -rf "$out" && mkdir -p "$out/media/clips" "$out/data"
cp "$clip" "$out/media/clips/cfr.mkv"
token=$("$framelift" serve token add alice --admin --data "$out/data")
FRAMELIFT_MODELS="$out/models" FRAMELIFT_NPM_TARBALLS="$tarballs" "$framelift" serve --listen 127.0.0.1:0 --data "$out/data" \
  --media "$out/media" --price-per-hour 3 --offline-models >"$out/server.log" 2>&1 &
server=$!
devtools_port=$((20000 + RANDOM % 20000))
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --remote-debugging-port=$devtools_port \
  --user-data-dir="$out/profile" about:blank >"$out/chromium.log" 2>&1 &
browser=$!
trap 'kill $server $browser 2>/dev/null; wait $server $browser 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q "listening on" "$out/server.log" && break; sleep 0.1; done
url=$(sed -n 's/^framelift serve: listening on //p' "$out/server.log" | head -1)
[ -n "$url" ] || { cat "$out/server.log"; exit 1; }
timeout 240 node "${node_flags[@]}" --no-warnings "$(dirname "$0")/browser_flow.mjs" $devtools_port "$url/" "$token" "$out" "$clip"
