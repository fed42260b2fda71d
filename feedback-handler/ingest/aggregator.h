// Spans → per-key aggregates (DESIGN §4): function latency, call sites (parent → child within
// the request), loop iterations, result sizes, hosts, versions. Pure and synchronous: the HTTP
// layer calls it per request and hands the Batch to the store.
#pragma once

#include <cstdint>
#include <string>

#include "feedback-handler/ingest/span_index.h"
#include "feedback-handler/otlp/otlp.h"
#include "feedback-handler/store/batch.h"

namespace perfhat::handler {

struct IngestStats {
  uint64_t spans = 0;    // spans aggregated
  uint64_t skipped = 0;  // spans without any identity (no name, no code.* attributes)
};

// Aggregates every span of `request` into `batch` (which may already hold data).
// Sampling weights (perfhat.sampling.weight, else sampling.weight; default 1) weight every
// count, so counts estimate true call counts. A span carrying perfhat.loop.ordinal is a
// loop-site record of its enclosing function (not a latency sample of that function).
// Call sites link parents present in the same request and, with `recent`, parents and children
// exported in other recent requests (see span_index.h); an edge whose other end never shows up
// is left out rather than guessed.
IngestStats aggregate(const otlp::ExportRequest& request, Batch& batch,
                      SpanIndex* recent = nullptr);

// The dimensions aggregates are kept by, from resource attributes (service.name,
// service.version, deployment.environment[.name], host.name), sanitized to UTF-8.
struct ResourceDims {
  std::string service, version, env, host;
  std::string release, variant, replica;  // perfhat.release/.variant/.replica (docs/plan.md)
};
ResourceDims resourceDims(const otlp::Attributes& resource);

}  // namespace perfhat::handler
