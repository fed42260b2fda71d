#include "feedback-handler/ingest/intake_limits.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <variant>

#include "feedback-handler/store/batch.h"
#include "feedback-handler/util/rfc3339.h"

namespace perfhat::handler {
namespace {

int64_t floorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
  return r;
}

// Why a resource's spans are refused ("" when its dimensions are within the limits).
const char* resourceProblem(const otlp::Attributes& resource) {
  for (const auto& [name, value] : resource) {
    if (name.size() > IntakeLimits::kMaxAttributeNameBytes) {
      return "resource attribute name longer than 256 bytes";
    }
    if (name != "service.name" && name != "service.version" && name != "deployment.environment" &&
        name != "deployment.environment.name" && name != "host.name") {
      continue;
    }
    if (const auto* s = std::get_if<std::string>(&value);
        s && s->size() > IntakeLimits::kMaxDimensionBytes) {
      return "service.name, service.version, deployment.environment or host.name longer than "
             "256 bytes";
    }
  }
  return nullptr;
}

// A numeric attribute, when present, within [lo, hi] (NaN is not).
bool numberWithin(const otlp::Attributes& a, std::string_view key, double lo, double hi) {
  double v = 0;
  if (!otlp::attrNumber(a, key, v)) return true;
  return v >= lo && v <= hi;
}

// Why a span is refused, apart from its time ("" when it is within the limits).
const char* spanProblem(const otlp::Span& s) {
  if (s.name.size() > IntakeLimits::kMaxKeyBytes) return "span name longer than 4096 bytes";
  for (const auto& [name, value] : s.attributes) {
    if (name.size() > IntakeLimits::kMaxAttributeNameBytes) {
      return "attribute name longer than 256 bytes";
    }
    const auto* text = std::get_if<std::string>(&value);
    if (text && name.starts_with("code.") && text->size() > IntakeLimits::kMaxKeyBytes) {
      return "code.* attribute longer than 4096 bytes";
    }
  }
  const auto& a = s.attributes;
  if (!numberWithin(a, "perfhat.sampling.weight", 1e-300, IntakeLimits::kMaxSamplingWeight) ||
      (!otlp::findAttr(a, "perfhat.sampling.weight") &&
       !numberWithin(a, "sampling.weight", 1e-300, IntakeLimits::kMaxSamplingWeight))) {
    return "sampling weight must be a number in (0, 1e9]";
  }
  for (const char* amount :
       {"perfhat.loop.iterations", "perfhat.result.size", "perfhat.input.size"}) {
    if (!numberWithin(a, amount, 0, IntakeLimits::kMaxAmount)) {
      return "perfhat.loop.iterations, perfhat.result.size and perfhat.input.size must be numbers "
             "in [0, 1e15]";
    }
  }
  if (!numberWithin(a, "perfhat.loop.ordinal", 0, IntakeLimits::kMaxLoopOrdinal)) {
    return "perfhat.loop.ordinal must be a number in [0, 1e6]";
  }
  return nullptr;
}

}  // namespace

bool TimeBounds::containsBucket(int64_t bucket) const {
  return bucket >= floorDiv(oldest_ns, kBucketNs) && bucket <= floorDiv(newest_ns, kBucketNs);
}

std::string TimeBounds::describe() const {
  return "[" + formatRfc3339(oldest_ns) + ", " + formatRfc3339(newest_ns) + "]";
}

TimeBounds acceptedTimes(int64_t now_ns, int64_t retention_minutes) {
  TimeBounds b;
  // The oldest minute purge keeps (store.cc purge(): buckets below now/1min − retention go).
  const int64_t minutes = std::clamp<int64_t>(retention_minutes, 0, INT64_MAX / kBucketNs);
  b.oldest_ns = saturatingAdd(floorDiv(now_ns, kBucketNs) * kBucketNs, -minutes * kBucketNs);
  b.newest_ns = saturatingAdd(now_ns, IntakeLimits::kClockSkewNs);
  return b;
}

void screenSpans(otlp::ExportRequest& request, const TimeBounds& bounds) {
  std::vector<const char*> bad_resource(request.resources.size(), nullptr);
  for (size_t r = 0; r < request.resources.size(); ++r) {
    bad_resource[r] = resourceProblem(request.resources[r]);
  }
  auto refuse = [&](const char* reason) {
    ++request.rejected;
    if (request.rejection_reason.empty()) {
      if (reason) {
        request.rejection_reason = reason;
      } else {
        request.rejection_reason =
            "span time outside the accepted window " + bounds.describe() +
            " (the retention back from now, up to 10 minutes of clock skew ahead)";
      }
    }
  };
  std::erase_if(request.spans, [&](const otlp::Span& s) {
    if (s.resource < bad_resource.size() && bad_resource[s.resource]) {
      refuse(bad_resource[s.resource]);
      return true;
    }
    const auto t0 = static_cast<int64_t>(std::min<uint64_t>(s.start_unix_nano, INT64_MAX));
    const auto t1 = static_cast<int64_t>(std::min<uint64_t>(s.end_unix_nano, INT64_MAX));
    if (!bounds.contains(t0) || !bounds.contains(t1)) {
      refuse(nullptr);
      return true;
    }
    if (const char* p = spanProblem(s)) {
      refuse(p);
      return true;
    }
    return false;
  });
}

}  // namespace perfhat::handler
