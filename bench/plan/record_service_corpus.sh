#!/usr/bin/env bash
# Records a full-trace corpus of the sample service: 6 agile-service processes with every probe
# on and every call exported (OTLP/JSON) to bench/plan/otlp_corpus_receiver.py, each process
# split into 6 sites by trace id (36 sites, the paper's 36 users). Writes OUT (SITE<TAB>KEY).
#   bench/plan/record_service_corpus.sh BUILD OUT [REQUESTS_PER_PROCESS=1000]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "$1" && pwd)
OUT=$2
REQUESTS=${3:-1000}
. "$ROOT/scripts/lib/processes.sh"
scratch_dir perfhat-corpus
python3 "$ROOT/bench/plan/otlp_corpus_receiver.py" "$TMP/port" "$OUT" 6 &
PIDS+=($!)
for _ in $(seq 50); do [ -s "$TMP/port" ] && break; sleep 0.1; done
PORT=$(cat "$TMP/port")
start userdir "$BUILD/samples/agile-userdir" --listen 127.0.0.1:0
USERDIR=$ADDR
svc=() addrs=()
for i in 0 1 2 3 4 5; do
  start "svc$i" /usr/bin/env PERFHAT_ENDPOINT="http://127.0.0.1:$PORT" PERFHAT_SAMPLER=full \
    OTEL_EXPORTER_OTLP_PROTOCOL=http/json PERFHAT_EXPORT_INTERVAL_S=1 OTEL_SERVICE_NAME="agile-r$i" \
    "$BUILD/samples/agile-service" --listen 127.0.0.1:0 --db "$TMP/a$i.sqlite" \
    --userdir "http://$USERDIR" --threads 2
  svc+=("$LAST_PID") addrs+=("$ADDR")
done
drive_agile 60 900 "$REQUESTS" "${addrs[@]}"
stop_each "${svc[@]}"
sleep 1
echo "$(wc -l < "$OUT") records, $(cut -f2 "$OUT" | sort -u | wc -l) functions, $(cut -f1 "$OUT" | sort -u | wc -l) sites"
