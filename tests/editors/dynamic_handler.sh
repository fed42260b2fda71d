#!/usr/bin/env bash
# Starts a perfhat-handler for the call-graph editor tests (issue #24) and seeds it with OTLP
# spans of the sample workspace: OrderService::total calling Catalog::price over the last hour
# (the read window is one hour, so the data covers it), and Catalog::audit two hours ago only
# (probed, never called within the window). Prints the handler's URL on stdout; the handler
# runs in the background until the caller kills the pid written to DIR/handler.pid.
# Usage: dynamic_handler.sh /path/to/perfhat-handler DIR
set -euo pipefail
handler=${1:?usage: dynamic_handler.sh /path/to/perfhat-handler DIR}
dir=${2:?usage: dynamic_handler.sh /path/to/perfhat-handler DIR}
here=$(cd "$(dirname "$0")" && pwd)
[ -x "$handler" ] || { echo "FAIL: handler not built: $handler (build target perfhat-handler)" >&2; exit 1; }
mkdir -p "$dir"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$handler" --mode deployed --allow-unauthenticated --store "$dir/handler.sqlite" --range-hours 1 \
  --listen "127.0.0.1:$port" >"$dir/handler.log" 2>&1 &
echo $! >"$dir/handler.pid"
url=http://127.0.0.1:$port
for _ in $(seq 1 100); do
  curl -sf "$url/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -sf "$url/healthz" >/dev/null || { echo "FAIL: handler did not start" >&2; cat "$dir/handler.log" >&2; exit 1; }
python3 "$here/dynamic_spans.py" | curl -sf -X POST -H 'Content-Type: application/json' \
  --data-binary @- "$url/v1/traces" >/dev/null
# The write-behind flush: wait (bounded) until the handler answers with every call.
key='shop%3A%3ACatalog%3A%3Aprice%28int%29%20const'
for _ in $(seq 1 100); do
  if curl -sf "$url/v1/dynamic?key=$key" | grep -q '"visits":180'; then
    echo "$url"
    exit 0
  fi
  sleep 0.1
done
echo "FAIL: the handler never answered 180 calls of price(); it said:" >&2
curl -s "$url/v1/dynamic?key=$key" >&2
exit 1
