// The intake limits (intake_limits.h): spans dated outside the store's window, with sampling
// weights or amounts out of range, or with oversized names are removed with a reason; the rest
// pass unchanged.
#include "feedback-handler/ingest/intake_limits.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "feedback-handler/ingest/aggregator.h"
#include "feedback-handler/store/batch.h"

namespace perfhat::handler {
namespace {

constexpr int64_t kNow2026 = 1'795'000'000'000'000'000;  // 2026-11-18
constexpr int64_t kMinuteNs = 60'000'000'000;
constexpr int64_t kRetention = 30 * 24 * 60;

otlp::Span spanAt(int64_t start, otlp::Attributes attrs = {}) {
  otlp::Span s;
  s.trace_id = std::string(16, 'T');
  s.span_id = std::string(8, 'S');
  s.name = "op";
  s.start_unix_nano = static_cast<uint64_t>(start);
  s.end_unix_nano = static_cast<uint64_t>(start) + 1000;
  s.attributes = std::move(attrs);
  s.attributes.emplace_back("code.function.name", std::string("a::f"));
  return s;
}

// Screens one span; returns the rejection reason ("" when it passed).
std::string screenOne(otlp::Span s, otlp::Attributes resource = {}) {
  otlp::ExportRequest r;
  r.resources.push_back(std::move(resource));
  r.spans.push_back(std::move(s));
  screenSpans(r, acceptedTimes(kNow2026, kRetention));
  EXPECT_EQ(r.spans.size() + r.rejected, 1u);
  return r.rejection_reason;
}

TEST(IntakeLimits, SpansOutsideTheRetentionWindowAreRefusedWithTheWindow) {
  EXPECT_EQ(screenOne(spanAt(kNow2026 - 5 * kMinuteNs)), "");
  EXPECT_EQ(screenOne(spanAt(kNow2026 + 9 * kMinuteNs)), "") << "clock skew is allowed";
  EXPECT_EQ(screenOne(spanAt(kNow2026 - (kRetention - 1) * kMinuteNs)), "");
  const std::string in_1970 = screenOne(spanAt(1'000'000));
  EXPECT_NE(in_1970.find("outside the accepted window"), std::string::npos) << in_1970;
  EXPECT_NE(in_1970.find("2026-10-19T"), std::string::npos) << "names the window: " << in_1970;
  // 2554: beyond int64 nanoseconds too.
  otlp::Span far = spanAt(0);
  far.start_unix_nano = 18'446'744'073'000'000'000ULL;
  far.end_unix_nano = far.start_unix_nano + 1;
  EXPECT_NE(screenOne(far).find("outside the accepted window"), std::string::npos);
  EXPECT_NE(screenOne(spanAt(kNow2026 + 11 * kMinuteNs)), "");
  EXPECT_NE(screenOne(spanAt(kNow2026 - (kRetention + 2) * kMinuteNs)), "");
  // The end counts too (a span that ends in the far future).
  otlp::Span long_end = spanAt(kNow2026);
  long_end.end_unix_nano = static_cast<uint64_t>(kNow2026) + 1'000'000'000'000'000;
  EXPECT_NE(screenOne(long_end), "");
}

TEST(IntakeLimits, NumbersOutOfRangeAreRefused) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (double w : {1e308, 1e19, 1e10, 0.0, -1.0, nan, static_cast<double>(INFINITY)}) {
    EXPECT_NE(screenOne(spanAt(kNow2026, {{"perfhat.sampling.weight", w}})).find("sampling weight"),
              std::string::npos)
        << w;
    EXPECT_NE(screenOne(spanAt(kNow2026, {{"sampling.weight", w}})), "") << w;
  }
  EXPECT_EQ(screenOne(spanAt(kNow2026, {{"perfhat.sampling.weight", 1e9}})), "");
  EXPECT_EQ(screenOne(spanAt(kNow2026, {{"perfhat.sampling.weight", std::string("10")}})), "");
  EXPECT_NE(screenOne(spanAt(kNow2026, {{"perfhat.sampling.weight", std::string("1e300")}})), "");
  for (const char* amount :
       {"perfhat.loop.iterations", "perfhat.result.size", "perfhat.input.size"}) {
    for (double v : {-1.0, 1e16, 1e308, nan}) {
      EXPECT_NE(screenOne(spanAt(kNow2026, {{amount, v}})), "") << amount << " " << v;
    }
    EXPECT_EQ(screenOne(spanAt(kNow2026, {{amount, 1e12}})), "") << amount;
  }
  EXPECT_NE(screenOne(spanAt(kNow2026, {{"perfhat.loop.ordinal", 1e300}})), "");
  EXPECT_NE(screenOne(spanAt(kNow2026, {{"perfhat.loop.ordinal", -3.0}})), "");
}

TEST(IntakeLimits, OversizedNamesAndDimensionsAreRefused) {
  const std::string huge(10 << 20, 'x');  // 10 MB
  otlp::Span named = spanAt(kNow2026);
  named.name = huge;
  EXPECT_NE(screenOne(named).find("span name longer than 4096"), std::string::npos);
  EXPECT_NE(screenOne(spanAt(kNow2026, {{"code.function.name", huge}})).find("code.*"),
            std::string::npos);
  EXPECT_NE(screenOne(spanAt(kNow2026, {{huge, std::string("v")}})).find("attribute name"),
            std::string::npos);
  EXPECT_NE(screenOne(spanAt(kNow2026), {{"service.name", huge}}).find("service.name"),
            std::string::npos);
  EXPECT_NE(screenOne(spanAt(kNow2026), {{"host.name", std::string(257, 'h')}}), "");
  EXPECT_EQ(screenOne(spanAt(kNow2026), {{"host.name", std::string(256, 'h')}}), "");
  EXPECT_EQ(screenOne(spanAt(kNow2026, {{"other", huge}})), "") << "values perfhat never stores";
}

TEST(IntakeLimits, OnlyTheOffendingSpansGoAndTheFirstReasonIsKept) {
  otlp::ExportRequest r;
  r.resources.emplace_back();
  r.spans.push_back(spanAt(kNow2026));
  r.spans.push_back(spanAt(1'000'000));
  r.spans.push_back(spanAt(kNow2026, {{"perfhat.sampling.weight", 1e308}}));
  r.spans.push_back(spanAt(kNow2026 - kMinuteNs));
  r.rejected = 1;  // a span the decoder dropped
  r.rejection_reason = "span id must be 8 bytes";
  screenSpans(r, acceptedTimes(kNow2026, kRetention));
  EXPECT_EQ(r.spans.size(), 2u);
  EXPECT_EQ(r.rejected, 3u);
  EXPECT_EQ(r.rejection_reason, "span id must be 8 bytes");
}

// What the screen lets through keeps every stored total finite: the largest weight on the
// largest values, many times over, still serializes and reads back.
TEST(IntakeLimits, TheLargestAcceptedSpansKeepStoredRowsReadable) {
  otlp::ExportRequest r;
  r.resources.emplace_back();
  for (int i = 0; i < 2000; ++i) {
    otlp::Span s = spanAt(kNow2026 - kMinuteNs, {{"perfhat.sampling.weight", 1e9},
                                                 {"perfhat.result.size", 1e15},
                                                 {"perfhat.input.size", 1e15}});
    s.span_id = std::string(4, 'S') + std::to_string(1000 + i);
    s.end_unix_nano = static_cast<uint64_t>(kNow2026);
    r.spans.push_back(s);
  }
  screenSpans(r, acceptedTimes(kNow2026, kRetention));
  ASSERT_EQ(r.rejected, 0u);
  Batch b;
  aggregate(r, b);
  for (int round = 0; round < 3; ++round) {
    Batch again;
    aggregate(r, again);
    b.absorb(std::move(again));
  }
  for (const auto& [k, v] : b.aggregates) {
    EXPECT_TRUE(std::isfinite(v.sketch.sum()) && std::isfinite(v.x2));
    EXPECT_EQ(DDSketch::deserialize(v.sketch.serialize()), v.sketch);
  }
}

}  // namespace
}  // namespace perfhat::handler
