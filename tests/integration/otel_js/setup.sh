#!/usr/bin/env bash
# Installs the pinned OpenTelemetry JS packages (package-lock.json) into this folder, once.
set -euo pipefail
cd "$(dirname "$0")"
if [ -d node_modules/@opentelemetry/exporter-trace-otlp-proto ] &&
   [ node_modules/.package-lock.json -nt package-lock.json ]; then
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
