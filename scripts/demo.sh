#!/usr/bin/env bash
# The README's main command: the whole perfhat loop on this machine, on embedded defaults.
#
#   sample service (libperfhat) ──OTLP──▶ deployed handler ──pull──▶ local handler ──▶ perfhat-lsp
#
# 1. installs what is missing and builds into build/ (CMake + Ninja),
# 2. starts a deployed feedback handler (SQLite in a temp dir), the user directory and the
#    instrumented sample service exporting to the handler,
# 3. drives the service with the workload generator for about a minute,
# 4. starts a local handler pulling from the deployed one,
# 5. runs `perfhat-lsp --check` on samples/agile/iteration_service.cc: first as it is (production
#    numbers beside calls and loops), then with task T4's patch applied to a temp copy (the
#    prediction for the new lazily loaded call inside two loops, and its regression warning),
# 6. records this run's feedback as BUILD/demo/agile.feedback.json, for an editor after the
#    handlers have stopped (the checkout's shipped dataset is only rewritten when asked, below),
# 7. prints how to attach VS Code or Neovim to the same data, and stops everything it started.
#
# Knobs (environment), all optional:
#   PERFHAT_DEMO_BUILD_DIR  build folder (default: build)
#   PERFHAT_DEMO_SKIP_BUILD=1  use the binaries already in the build folder (tests do this)
#   PERFHAT_DEMO_LOAD_S     seconds of load (default 60)
#   PERFHAT_DEMO_RATE       base request rate per second (default 25)
#   PERFHAT_DEMO_DATASET    where to record the dataset (default BUILD/demo/agile.feedback.json;
#                           empty = do not record; samples/datasets/agile.feedback.json
#                           refreshes the dataset shipped in the repository)
#   PERFHAT_DEMO_KEEP=1     keep the temp dir (logs, SQLite stores) for inspection
#   PERFHAT_DEMO_EXPORT     how the service exports: spans (default; one OTLP span per call) or
#                           aggregates (in-process histograms, docs/aggregate-export.md)
#   PERFHAT_DEMO_VARIANTS=N probe distribution (docs/plan.md): N service processes, each running
#                           one of the N variants of a release planned by `perfhat-plan variants`
#                           (every function in 2 of them), the load split among them; the
#                           handlers read the release (--releases) and the editor shows exposure
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${PERFHAT_DEMO_BUILD_DIR:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
LOAD_S=${PERFHAT_DEMO_LOAD_S:-60}
EXPORT=${PERFHAT_DEMO_EXPORT:-spans}
case "$EXPORT" in spans|aggregates) ;; *) echo "PERFHAT_DEMO_EXPORT must be spans or aggregates" >&2; exit 2 ;; esac
RATE=${PERFHAT_DEMO_RATE:-25}
VARIANTS=${PERFHAT_DEMO_VARIANTS:-0}
case "$VARIANTS" in ''|*[!0-9]*) echo "PERFHAT_DEMO_VARIANTS must be a number" >&2; exit 2 ;; esac
# Not the shipped dataset by default: running the demo should not modify the checkout.
DATASET=${PERFHAT_DEMO_DATASET-$BUILD/demo/agile.feedback.json}
TARGET_FILE=samples/agile/iteration_service.cc

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
die() { echo "demo: $*" >&2; exit 1; }

# ---- 1. set-up ----------------------------------------------------------------------------
if [ "${PERFHAT_DEMO_SKIP_BUILD:-0}" != 1 ]; then
  say "Installing dependencies and building (first run takes a while)"
  PERFHAT_SKIP_EDITOR_DEPS=${PERFHAT_SKIP_EDITOR_DEPS:-1} bash scripts/install-deps.sh
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$BUILD" -j"$(nproc)" \
    --target perfhat-handler perfhat-lsp perfhat-plan agile-service agile-userdir agile-workload
fi
for bin in feedback-handler/perfhat-handler server/perfhat-lsp samples/agile-service \
           samples/agile-userdir samples/agile-workload; do
  [ -x "$BUILD/$bin" ] || die "missing $BUILD/$bin (build it, or unset PERFHAT_DEMO_SKIP_BUILD)"
done
HANDLER=$BUILD/feedback-handler/perfhat-handler
LSP=$BUILD/server/perfhat-lsp

# shellcheck source=lib/processes.sh
. "$ROOT/scripts/lib/processes.sh"
scratch_dir perfhat-demo PERFHAT_DEMO_KEEP
trap 'exit 130' INT TERM

stop() {  # stop PID: SIGTERM and wait (the service flushes its spans on the way out)
  kill -TERM "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# ---- 2. production side -------------------------------------------------------------------
TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
RELEASES=()  # handler flags when the service runs variants
if [ "$VARIANTS" -gt 1 ]; then
  # The release: the functions of the shipped dataset without the request roots (api.cc,
  # report_api.cc; libperfhat always probes those), N variants, each function in 2 of them.
  say "Planning release 'demo': $VARIANTS variants of the sample service (perfhat-plan variants)"
  [ -x "$BUILD/plan/perfhat-plan" ] || die "missing $BUILD/plan/perfhat-plan"
  python3 - "$ROOT/samples/datasets/agile.feedback.json" "$TMP/units.txt" <<'PY'
import json, sys
items = json.load(open(sys.argv[1]))["items"]
keys = sorted(i["key"] for i in items
              if "(" in i["key"] and not i.get("file", "").endswith(("api.cc", "report_api.cc")))
open(sys.argv[2], "w").write("".join(k + "\n" for k in keys))
PY
  units=$(wc -l < "$TMP/units.txt")
  mkdir -p "$TMP/releases"
  "$BUILD/plan/perfhat-plan" variants --units "$TMP/units.txt" --variants "$VARIANTS" \
    --h-bound $(( (2 * units + VARIANTS - 1) / VARIANTS )) --strategy rb --seed 1 \
    --history "$TMP/releases" --release demo >/dev/null
  echo "release demo: $units functions, $VARIANTS variants of $(( (2 * units + VARIANTS - 1) / VARIANTS )) probes"
  RELEASES=(--releases "$TMP/releases")
fi
say "Starting the deployed feedback handler, the user directory and the sample service"
start deployed-handler "$HANDLER" --mode deployed --listen 127.0.0.1:0 \
  --store "$TMP/deployed.sqlite" --token "$TOKEN" "${RELEASES[@]}"
DEPLOYED=$ADDR
echo "deployed handler   http://$DEPLOYED  (store $TMP/deployed.sqlite)"
start userdir "$BUILD/samples/agile-userdir" --listen 127.0.0.1:0
USERDIR=$ADDR
echo "user directory     http://$USERDIR"
PERFHAT_ENDPOINT=http://$DEPLOYED PERFHAT_TOKEN=$TOKEN PERFHAT_SAMPLER=full PERFHAT_EXPORT=$EXPORT \
  PERFHAT_EXPORT_INTERVAL_S=2 OTEL_SERVICE_NAME=agile-service OTEL_SERVICE_VERSION=1.0.0 \
  start service "$BUILD/samples/agile-service" --listen 127.0.0.1:0 \
  --db "$TMP/agile.sqlite" --userdir "http://$USERDIR"
SERVICE=$ADDR
SERVICE_PID=${PIDS[-1]}
REPLICAS=("$SERVICE")
REPLICA_PIDS=("$SERVICE_PID")
if [ "$VARIANTS" -gt 1 ]; then  # the first process becomes replica 0 of the release
  stop "$SERVICE_PID"
  REPLICAS=()
  REPLICA_PIDS=()
  for i in $(seq 0 $((VARIANTS - 1))); do
    start "service$i" /usr/bin/env PERFHAT_ENDPOINT="http://$DEPLOYED" PERFHAT_TOKEN="$TOKEN" \
      PERFHAT_SAMPLER=full PERFHAT_EXPORT="$EXPORT" PERFHAT_EXPORT_INTERVAL_S=2 \
      OTEL_SERVICE_NAME=agile-service OTEL_SERVICE_VERSION=1.0.0 \
      PERFHAT_VARIANT_MANIFEST="$TMP/releases/release-demo.json" PERFHAT_REPLICA="$i" \
      "$BUILD/samples/agile-service" --listen 127.0.0.1:0 --db "$TMP/agile-$i.sqlite" \
      --userdir "http://$USERDIR"
    REPLICAS+=("$ADDR")
    REPLICA_PIDS+=("$LAST_PID")
  done
  echo "sample service     ${#REPLICAS[@]} replicas (${REPLICAS[*]}), replica i runs variant i"
fi
if [ "$EXPORT" = spans ]; then
  echo "sample service     http://$SERVICE  (exporting every call to the deployed handler)"
else
  echo "sample service     http://$SERVICE  (every call into histograms, exported to the deployed handler)"
fi

# ---- 3. load ------------------------------------------------------------------------------
say "Driving the service for ${LOAD_S}s (seasonal load around ${RATE} req/s; planners, developers, managers)"
period=$(( LOAD_S > 4 ? LOAD_S / 2 : 2 ))
LOADS=()
for i in "${!REPLICAS[@]}"; do  # one generator per replica, the rate split among them
  "$BUILD/samples/agile-workload" --target "http://${REPLICAS[$i]}" --shape seasonal \
    --rate "$(python3 -c "print($RATE / ${#REPLICAS[@]})")" --seed $((7 + i)) \
    --period "$period" --duration "$LOAD_S" --workers 4 --report "$TMP/workload$i.json" &
  LOADS+=($!)
done
for l in "${LOADS[@]}"; do wait "$l" || die "the workload failed (service logs in $TMP)"; done
say "Stopping the service (it flushes its last spans to the handler)"
for p in "${REPLICA_PIDS[@]}"; do stop "$p"; done

# ---- 4. workstation side ------------------------------------------------------------------
say "Starting a local feedback handler that pulls from the deployed one"
start local-handler "$HANDLER" --mode local --listen 127.0.0.1:0 --store "$TMP/local.sqlite" \
  --upstream "http://$DEPLOYED,$TOKEN" --sync-interval 5 "${RELEASES[@]}"
LOCAL=$ADDR
echo "local handler      http://$LOCAL  (store $TMP/local.sqlite)"
keys=0
for _ in $(seq 60); do
  curl -fsS -X POST "http://$LOCAL/v1/sync" >/dev/null 2>&1 || true
  keys=$(curl -fsS "http://$LOCAL/v1/changes?since=0" 2>/dev/null |
         python3 -c 'import json,sys; print(len(json.load(sys.stdin).get("keys", [])))' 2>/dev/null ||
         echo 0)
  [ "$keys" -gt 0 ] && break
  sleep 0.5
done
[ "$keys" -gt 0 ] || die "the local handler received no feedback (logs in $TMP)"
echo "local handler holds feedback for $keys functions"

# ---- 5. the editor's view -----------------------------------------------------------------
say "perfhat-lsp --check $TARGET_FILE (as deployed: production numbers)"
"$LSP" --check "$ROOT/$TARGET_FILE" --handler "http://$LOCAL" --compile-commands "$BUILD" \
  | tee "$TMP/check-before.txt"

# The T4 change, in a temp copy of the tree: samples/ copied, everything else linked, and the
# compile database rewritten to the copy so headers resolve to the patched versions.
WORK=$TMP/work
mkdir -p "$WORK"
for entry in "$ROOT"/* "$ROOT"/.perfhat.json; do
  [ -e "$entry" ] || continue
  [ "$(basename "$entry")" = samples ] || ln -s "$entry" "$WORK/"
done
cp -r "$ROOT/samples" "$WORK/samples"
(cd "$WORK" && patch -s -p1 < samples/tasks/T4/reference.patch) || die "T4 patch does not apply"
mkdir -p "$WORK/compile-db"
sed "s#$ROOT\([/ \"]\)#$WORK\1#g" "$BUILD/compile_commands.json" > "$WORK/compile-db/compile_commands.json"
say "perfhat-lsp --check $TARGET_FILE with task T4 applied (samples/tasks/T4/reference.patch)"
sed -n '/^+/p' "$ROOT/samples/tasks/T4/reference.patch" | grep -v '^+++' | sed 's/^/    added: /'
"$LSP" --check "$WORK/$TARGET_FILE" --handler "http://$LOCAL" --compile-commands "$WORK/compile-db" \
  | tee "$TMP/check-t4.txt"

# ---- 6. the offline dataset ---------------------------------------------------------------
if [ -n "$DATASET" ]; then
  say "Recording the feedback as $DATASET"
  curl -fsS "http://$LOCAL/v1/changes?since=0" |
    python3 -c 'import json,sys; print(json.dumps({"keys": json.load(sys.stdin)["keys"]}))' \
    > "$TMP/keys.json"
  mkdir -p "$(dirname "$DATASET")"
  curl -fsS -X POST -H 'Content-Type: application/json' --data-binary @"$TMP/keys.json" \
    "http://$LOCAL/v1/feedback:batchGet" |
    python3 -c '
import json, sys
# Paths relative to the repository, so the dataset works in any checkout (file:line matching
# compares path suffixes).
root = sys.argv[1].rstrip("/") + "/"
doc = json.load(sys.stdin)
for item in doc.get("items", []):
    if item.get("file", "").startswith(root):
        item["file"] = item["file"][len(root):]
json.dump(doc, sys.stdout, indent=1, sort_keys=True)' "$ROOT" \
    > "$DATASET.tmp"
  mv "$DATASET.tmp" "$DATASET"
  echo "wrote $(wc -c < "$DATASET") bytes; use it offline with:"
  echo "  $LSP --check $TARGET_FILE --feedback-file $DATASET --compile-commands $BUILD"
fi

# ---- 7. editors ---------------------------------------------------------------------------
say "The same data in your editor"
cat <<EOF
The handlers stop when this script ends. To keep live data, start a local handler yourself:
  $HANDLER --mode local --listen 127.0.0.1:4319 --store ~/.cache/perfhat/local.sqlite \\
    --upstream http://DEPLOYED_HOST:4318,TOKEN
or use this run's recorded data (no service needed): --feedback-file ${DATASET:-FILE.json}
(the dataset shipped with the repository: --feedback-file $ROOT/samples/datasets/agile.feedback.json)

VS Code:  install editors/vscode (perfhat-*.vsix), then set
            "perfhat.serverPath": "$LSP",
            "perfhat.handlerUrl": "http://127.0.0.1:4319"   (or "perfhat.feedbackFile")
          and open $ROOT/$TARGET_FILE (compile database: $BUILD).
Neovim:   add editors/neovim to 'runtimepath' and call
            require('perfhat').setup({ cmd = { '$LSP', '--handler', 'http://127.0.0.1:4319' } })
          (or '--feedback-file', '${DATASET:-FILE.json}'), then open the same file.
EOF
say "Done: everything this demo started is stopped on exit"
