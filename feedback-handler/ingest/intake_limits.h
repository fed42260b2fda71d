// Bounds on what the handler accepts from outside (OTLP spans, POST /v1/aggregates rows, exports
// pulled from an upstream), in one place. Everything stored is sent to every reader and kept for
// the retention, so a 10 MB service name or a span dated 2554 must be refused at the door, with
// a reason, rather than stored. docs/limits.md lists them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "feedback-handler/otlp/otlp.h"
#include "feedback-handler/store/batch.h"

namespace perfhat::handler {

struct IntakeLimits {
  // Span names, function keys (also callers), mangled names, code.* attribute values.
  static constexpr size_t kMaxKeyBytes = 4096;
  // code.file.path.
  static constexpr size_t kMaxPathBytes = 4096;
  // Resource dimensions: service.name, service.version, deployment.environment, host.name.
  static constexpr size_t kMaxDimensionBytes = 256;
  // Attribute names (none that perfhat reads is longer than 40 bytes).
  static constexpr size_t kMaxAttributeNameBytes = 256;
  // perfhat.sampling.weight / sampling.weight: a span stands for at most 10^9 calls.
  static constexpr double kMaxSamplingWeight = 1e9;
  // Loop iterations, result sizes, input sizes.
  static constexpr double kMaxAmount = 1e15;
  // Loop ordinals (loops of one function, in source order).
  static constexpr double kMaxLoopOrdinal = 1e6;
  // How far in the future a time may lie (clock skew between the runtime and the handler).
  static constexpr int64_t kClockSkewNs = handler::kClockSkewNs;  // store/batch.h
};

// The times the store keeps: [now − retention, now + clock skew]. Anything older is what purge
// removes; anything newer would be stored outside every window and never purged.
struct TimeBounds {
  int64_t oldest_ns = INT64_MIN;
  int64_t newest_ns = INT64_MAX;
  bool contains(int64_t t) const { return t >= oldest_ns && t <= newest_ns; }
  // The same window in 1-minute buckets (minutes since the epoch).
  bool containsBucket(int64_t bucket) const;
  // "[2026-10-26T18:00:00Z, 2026-11-25T18:10:00Z]" for rejection reasons.
  std::string describe() const;
};

// The bounds for a store whose clock reads `now_ns` and that keeps `retention_minutes`.
TimeBounds acceptedTimes(int64_t now_ns, int64_t retention_minutes);

// Removes the spans of `request` that break a limit above (times outside `bounds`, sampling
// weights or amounts out of range, oversized names or attribute values, spans of a resource
// with an oversized dimension), counting them in request.rejected and giving the first reason in
// request.rejection_reason (the OTLP partialSuccess the client sees).
void screenSpans(otlp::ExportRequest& request, const TimeBounds& bounds);

}  // namespace perfhat::handler
