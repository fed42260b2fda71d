#!/usr/bin/env python3
"""OTLP/JSON spans of the sample workspace for the call-graph editor tests (dynamic_handler.sh):
60 requests over the last hour, each OrderService::total calling Catalog::price three times;
Catalog::audit twice, two hours ago. Deterministic apart from the clock."""
import json
import random
import time

TOTAL = "shop::OrderService::total(const shop::Order &) const"
PRICE = "shop::Catalog::price(int) const"
AUDIT = "shop::Catalog::audit(int) const"
MINUTE = 60 * 10**9

rng = random.Random(24)
spans = []


def span(trace, parent, fn, line, start, dur):
    sid = "%016x" % (rng.getrandbits(63) | 1)
    spans.append({
        "traceId": trace, "spanId": sid, "parentSpanId": parent, "name": fn,
        "kind": 1, "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + dur),
        "attributes": [
            {"key": "code.function.name", "value": {"stringValue": fn}},
            # Relative to the workspace root: the server resolves it there for hover links.
            {"key": "code.file.path", "value": {"stringValue": "src/catalog.cc"}},
            {"key": "code.line.number", "value": {"intValue": str(line)}},
        ]})
    return sid


now = time.time_ns()
for i in range(60):
    start = now - 59 * MINUTE + i * MINUTE - (MINUTE // 2 if i == 59 else 0)
    trace = "%032x" % (rng.getrandbits(127) | 1)
    t = span(trace, "", TOTAL, 38, start, 5_000_000)
    for k in range(3):
        span(trace, t, PRICE, 26, start + 100_000 + k * 1_500_000, 1_200_000)
for i in range(2):
    trace = "%032x" % (rng.getrandbits(127) | 1)
    span(trace, "", AUDIT, 28, now - 120 * MINUTE + i * 1_000_000, 50_000)

print(json.dumps({"resourceSpans": [{
    "resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "shop"}},
        {"key": "service.version", "value": {"stringValue": "1"}}]},
    "scopeSpans": [{"scope": {"name": "perfhat-editor-test"}, "spans": spans}]}]}))
