// The aggregate export mode (PERFHAT_EXPORT=aggregates) through the public macros: recorded
// calls become per-site histograms (function, call site, loop, size) exported as deltas, with
// the in-memory exporter and the injected clock of engine_test.cc (100 ns per clock read).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <thread>

#include "histogram.h"
#include "perfhat/memory_exporter.hpp"
#include "perfhat/perfhat.hpp"

namespace aggns {
[[gnu::noinline]] int leaf(int x) {
  PERFHAT_FUNCTION();
  PERFHAT_RESULT_SIZE(x);
  PERFHAT_LOOP_ITERATIONS(2 * x);
  return x + 1;
}
[[gnu::noinline]] int twice(int x) {
  PERFHAT_FUNCTION();
  return leaf(x) + leaf(x + 1);
}
[[gnu::noinline]] void request(int x) {
  PERFHAT_REQUEST("GET /agg");
  twice(x);
}
// A request root and a function probe in one function (either order): the same calls.
[[gnu::noinline]] int serve(int x) {
  PERFHAT_REQUEST("GET /serve");
  PERFHAT_FUNCTION();
  return twice(x);
}
[[gnu::noinline]] int serve_function_first(int x) {
  PERFHAT_FUNCTION();
  PERFHAT_REQUEST("GET /serve2");
  return twice(x);
}
[[gnu::noinline]] void fails() {
  PERFHAT_FUNCTION();
  throw std::runtime_error("boom");
}
}  // namespace aggns

namespace {

using perfhat::HistogramData;
using Exported = perfhat::MemoryExporter::Histogram;

std::shared_ptr<perfhat::MemoryExporter> start_aggregates(const char* sampler = "full") {
  perfhat::Config c;
  c.sampler = sampler;
  c.service_name = "aggregate-test";
  c.export_mode = "aggregates";
  auto ex = std::make_shared<perfhat::MemoryExporter>();
  EXPECT_TRUE(perfhat::init(c, ex)) << perfhat::last_error();
  return ex;
}

// Totals over every exported row of `kind` whose site (and caller) contain the needles.
struct Totals {
  double count = 0, sum = 0, errors = 0, parents = 0;
  uint32_t line = 0;
  int rows = 0;
};
Totals totals(const perfhat::MemoryExporter& ex, HistogramData::Kind kind, const std::string& site,
              const std::string& caller = "") {
  Totals t;
  for (const Exported& h : ex.histograms()) {
    if (h.data.kind != kind || h.site.function.find(site) == std::string::npos) continue;
    if (!caller.empty() && h.caller.function.find(caller) == std::string::npos &&
        h.caller.name.find(caller) == std::string::npos) {
      continue;
    }
    t.count += h.data.count();
    t.sum += h.data.sum;
    t.errors += h.data.errors;
    t.parents += h.data.parents;
    t.line = h.data.line;
    ++t.rows;
  }
  return t;
}

TEST(InstrAggregate, RecordedCallsBecomeHistogramsNotSpans) {
  auto ex = start_aggregates();
  const auto before = perfhat::counters();  // counters are cumulative across init()s
  for (int i = 0; i < 10; ++i) aggns::request(3);
  perfhat::flush();
  EXPECT_TRUE(ex->spans().empty());

  Totals leaf = totals(*ex, HistogramData::kFunction, "aggns::leaf");
  EXPECT_EQ(leaf.count, 20);
  EXPECT_GE(leaf.sum, 20 * 100.0);  // at least one 100 ns clock step per call
  EXPECT_EQ(leaf.errors, 0);
  // Two calls per invocation of twice(): 20 calls on the edge, 10 distinct parents.
  Totals edge = totals(*ex, HistogramData::kCallSite, "aggns::leaf", "aggns::twice");
  EXPECT_EQ(edge.count, 20);
  EXPECT_EQ(edge.parents, 10);
  Totals root_edge = totals(*ex, HistogramData::kCallSite, "aggns::twice", "GET /agg");
  EXPECT_EQ(root_edge.count, 10);
  EXPECT_EQ(root_edge.parents, 10);
  EXPECT_EQ(totals(*ex, HistogramData::kFunction, "aggns::request").count, 10);
  // The request root has no caller: no call-site row of its own.
  EXPECT_EQ(totals(*ex, HistogramData::kCallSite, "aggns::request").rows, 0);

  // Sizes 3 and 4, iterations 6 and 8, per request.
  Totals size = totals(*ex, HistogramData::kResultSize, "aggns::leaf");
  EXPECT_EQ(size.count, 20);
  EXPECT_EQ(size.sum, 10 * (3 + 4));
  Totals loop = totals(*ex, HistogramData::kLoop, "aggns::leaf");
  EXPECT_EQ(loop.count, 20);
  EXPECT_EQ(loop.sum, 10 * (6 + 8));
  EXPECT_GT(loop.line, 0u);

  auto c = perfhat::counters();
  EXPECT_GT(c.histogram_rows_exported, before.histogram_rows_exported);
  EXPECT_EQ(c.records_dropped_histogram, before.records_dropped_histogram);
  EXPECT_EQ(c.spans_exported, before.spans_exported);
  EXPECT_EQ(c.spans_recorded - before.spans_recorded, 40u);  // 10 requests x 4 probes
  perfhat::shutdown();
}

// Self time per call: its duration less its recorded direct children's, so over every call of a
// site, self + the children's time (the call-site rows under it) = its inclusive time exactly.
TEST(InstrAggregate, SelfTimeIsDurationLessDirectChildren) {
  auto ex = start_aggregates();
  for (int i = 0; i < 10; ++i) aggns::request(3);
  perfhat::flush();
  for (const char* site : {"aggns::twice", "aggns::request"}) {
    const Totals incl = totals(*ex, HistogramData::kFunction, site);
    const Totals self = totals(*ex, HistogramData::kSelfTime, site);
    EXPECT_EQ(self.count, incl.count) << site;
    EXPECT_GT(self.sum, 0) << site;
    double children = 0;
    for (const Exported& h : ex->histograms()) {
      if (h.data.kind == HistogramData::kCallSite &&
          (h.caller.function.find(site) != std::string::npos ||
           h.caller.name.find(site) != std::string::npos)) {
        children += h.data.sum;
      }
    }
    EXPECT_GT(children, 0) << site;
    EXPECT_NEAR(self.sum + children, incl.sum, 1e-6 * incl.sum) << site;
  }
  // A leaf's self time is its duration.
  const Totals leaf = totals(*ex, HistogramData::kFunction, "aggns::leaf");
  const Totals leaf_self = totals(*ex, HistogramData::kSelfTime, "aggns::leaf");
  EXPECT_EQ(leaf_self.count, leaf.count);
  EXPECT_DOUBLE_EQ(leaf_self.sum, leaf.sum);
  perfhat::shutdown();
}

TEST(InstrAggregate, SitesCarryTheIdentitySpansWould) {
  auto ex = start_aggregates();
  aggns::leaf(1);
  perfhat::flush();
  bool seen = false;
  for (const Exported& h : ex->histograms()) {
    if (h.data.kind != HistogramData::kFunction || h.site.function != "int aggns::leaf(int)") {
      continue;
    }
    seen = true;
    EXPECT_EQ(h.site.mangled, "_ZN5aggns4leafEi");
    EXPECT_NE(h.site.file.find("engine_aggregate_test.cc"), std::string::npos);
    EXPECT_GT(h.site.line, 0u);
    EXPECT_GT(h.data.minute, 29'000'000);  // minutes since the epoch, not ticks
    // Bins ascending and unique; the count is in the bins (durations >= 1 ns).
    ASSERT_FALSE(h.data.bins.empty());
    for (size_t i = 1; i < h.data.bins.size(); ++i) {
      EXPECT_LT(h.data.bins[i - 1].first, h.data.bins[i].first);
    }
    EXPECT_EQ(h.data.zero, 0);
  }
  EXPECT_TRUE(seen);
  perfhat::shutdown();
}

TEST(InstrAggregate, EachExportCarriesOnlyWhatIsNew) {
  auto ex = start_aggregates();
  for (int i = 0; i < 7; ++i) aggns::leaf(i);
  perfhat::flush();
  EXPECT_EQ(totals(*ex, HistogramData::kFunction, "aggns::leaf").count, 7);
  ex->clear();
  perfhat::flush();
  EXPECT_TRUE(ex->histograms().empty());
  for (int i = 0; i < 5; ++i) aggns::leaf(i);
  perfhat::flush();
  EXPECT_EQ(totals(*ex, HistogramData::kFunction, "aggns::leaf").count, 5);
  perfhat::shutdown();
}

TEST(InstrAggregate, ThreadsMergeExactlyAndExitedThreadsAreNotLost) {
  auto ex = start_aggregates();
  std::vector<std::thread> ts;
  ts.reserve(4);
  for (int t = 0; t < 4; ++t) {
    // 4,000 calls of twice() are 28,000 records (leaf() adds a size and a loop record): within
    // one thread's ring even if the background thread does not wake before the thread exits.
    ts.emplace_back([] {
      for (int i = 0; i < 4000; ++i) aggns::twice(i);
    });
  }
  for (auto& t : ts) t.join();
  perfhat::flush();
  perfhat::flush();  // the exited threads are reaped after a harvest that saw them exited
  EXPECT_EQ(totals(*ex, HistogramData::kFunction, "aggns::twice").count, 16000);
  EXPECT_EQ(totals(*ex, HistogramData::kFunction, "aggns::leaf").count, 32000);
  Totals edge = totals(*ex, HistogramData::kCallSite, "aggns::leaf", "aggns::twice");
  EXPECT_EQ(edge.count, 32000);
  EXPECT_EQ(edge.parents, 16000);
  // One row per (kind, site, caller) per export: threads are merged before sending.
  EXPECT_EQ(totals(*ex, HistogramData::kFunction, "aggns::twice").rows, 1);
  perfhat::shutdown();
}

TEST(InstrAggregate, ExceptionsCountAsErrors) {
  auto ex = start_aggregates();
  EXPECT_THROW(aggns::fails(), std::runtime_error);
  aggns::leaf(1);
  perfhat::flush();
  Totals f = totals(*ex, HistogramData::kFunction, "aggns::fails");
  EXPECT_EQ(f.count, 1);
  EXPECT_EQ(f.errors, 1);
  EXPECT_EQ(totals(*ex, HistogramData::kFunction, "aggns::leaf").errors, 0);
  perfhat::shutdown();
}

TEST(InstrAggregate, UnknownExportModeIsRejected) {
  perfhat::Config c;
  c.export_mode = "traces";
  EXPECT_FALSE(perfhat::init(c, std::make_shared<perfhat::MemoryExporter>()));
  EXPECT_NE(perfhat::last_error().find("PERFHAT_EXPORT"), std::string::npos);
  perfhat::shutdown();
}

// ---- Histogram ---------------------------------------------------------------------------

using perfhat::detail::sketch_bin;
using perfhat::detail::sketch_bin_bounds;

TEST(InstrHistogram, AThreadAsksForADrainOncePerHalfRing) {
  using perfhat::detail::crossed_half_ring;
  constexpr uint64_t kCap = 32768;
  EXPECT_FALSE(crossed_half_ring(0, 1, kCap));
  EXPECT_FALSE(crossed_half_ring(16381, 16384 - 1, kCap));
  EXPECT_TRUE(crossed_half_ring(16383, 16384, kCap));
  EXPECT_TRUE(crossed_half_ring(16382, 16385, kCap));  // three records at once
  EXPECT_FALSE(crossed_half_ring(16384, 16387, kCap));
  EXPECT_TRUE(crossed_half_ring(32767, 32769, kCap));
  EXPECT_TRUE(crossed_half_ring((uint64_t{7} << 40) + 16383, (uint64_t{7} << 40) + 16384, kCap));
  EXPECT_FALSE(crossed_half_ring(5, 9, 0));  // no ring
  // Over a long run of pushes of 1-3 records, exactly one crossing per half ring.
  uint64_t head = 0;
  int crossings = 0;
  for (int i = 0; head < 10 * kCap; ++i) {
    const uint64_t next = head + 1 + static_cast<uint64_t>(i % 3);
    crossings += crossed_half_ring(head, next, kCap);
    head = next;
  }
  EXPECT_EQ(crossings, 20);
}

TEST(InstrHistogram, BinsAreDDSketchOnePercentBins) {
  // The fast bin (no log call) against common/ddsketch.cc's formula, over 12 orders of
  // magnitude and at every bin's edges.
  const double log_gamma = std::log((1 + 0.01) / (1 - 0.01));
  auto reference = [&](double v) { return static_cast<int>(std::ceil(std::log(v) / log_gamma)); };
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(0, 12);
  int checked = 0;
  for (int k = 0; k < 200000; ++k) {
    double v = std::pow(10.0, exponent(rng));
    ASSERT_EQ(sketch_bin(v), reference(v)) << v;
    ++checked;
  }
  for (int i = 1; i < 1300; ++i) {
    double edge = std::exp(i * log_gamma);
    for (double v : {edge * (1 - 1e-9), edge * (1 + 1e-9), std::floor(edge), std::ceil(edge)}) {
      if (v < 1) continue;
      ASSERT_EQ(sketch_bin(v), reference(v)) << v << " near bin " << i;
      ++checked;
    }
  }
  EXPECT_GT(checked, 200000);
  EXPECT_EQ(sketch_bin(1), 0);
  EXPECT_EQ(sketch_bin(1e300), perfhat::detail::kBinLimit - 1);
}

TEST(InstrHistogram, GrowsBothWaysAndClearsForTheNextInterval) {
  perfhat::detail::Histogram h;
  const double* bounds = sketch_bin_bounds();
  h.add(100, 1, bounds);    // bin 231
  h.add(100.5, 2, bounds);  // bin 231 too
  h.add(2, 1, bounds);      // bin 35: grows downwards
  h.add(1e6, 1, bounds);    // bin 691: grows upwards
  h.add(0, 4, bounds);      // no bin: the zero count
  EXPECT_EQ(h.lo, 35);
  ASSERT_EQ(h.bins.size(), 691u - 35u + 1u);
  EXPECT_EQ(h.bins[231 - 35], 3);
  EXPECT_EQ(h.bins[0], 1);
  EXPECT_EQ(h.bins.back(), 1);
  EXPECT_EQ(h.zero, 4);
  EXPECT_EQ(h.sum, 100 + 201 + 2 + 1e6);
  EXPECT_FALSE(h.empty());
  h.clear();
  EXPECT_TRUE(h.empty());
  h.add(50, 1, bounds);
  EXPECT_EQ(h.lo, sketch_bin(50));
  EXPECT_EQ(h.bins.size(), 1u);
}

TEST(InstrAggregate, AFullRingDropsAndCountsInsteadOfBlocking) {
  auto ex = start_aggregates();
  perfhat::set_analysis_cycle(1e9);
  const auto before = perfhat::counters();
  // 200,000 calls on a fresh thread between two exports: more than its 65,536-record ring
  // unless the background thread folds in between (it wakes every 50 ms); either way every
  // call is either in a histogram or counted as dropped.
  std::thread([] {
    for (int i = 0; i < 200000; ++i) aggns::leaf(i);
  }).join();
  perfhat::flush();
  const auto after = perfhat::counters();
  // Three records per call: its duration, its result size and its loop count.
  const double exported = totals(*ex, HistogramData::kFunction, "aggns::leaf").count +
                          totals(*ex, HistogramData::kResultSize, "aggns::leaf").count +
                          totals(*ex, HistogramData::kLoop, "aggns::leaf").count;
  EXPECT_EQ(exported + static_cast<double>(after.records_dropped_histogram -
                                           before.records_dropped_histogram),
            3 * 200000);
  perfhat::shutdown();
}

}  // namespace

// PERFHAT_REQUEST + PERFHAT_FUNCTION in one function: the handler keys both sites by the
// function, so its count must come from one of them only, with no edge from the function to
// itself (issue #19); the calls it makes keep it as their caller.
TEST(InstrAggregate, RequestAndFunctionProbesInOneFunctionCountOnce) {
  auto ex = start_aggregates();
  for (int i = 0; i < 6; ++i) aggns::serve(i);
  for (int i = 0; i < 4; ++i) aggns::serve_function_first(i);
  perfhat::flush();
  EXPECT_EQ(totals(*ex, HistogramData::kFunction, "aggns::serve(int)").count, 6);
  EXPECT_EQ(totals(*ex, HistogramData::kFunction, "aggns::serve_function_first").count, 4);
  EXPECT_EQ(totals(*ex, HistogramData::kCallSite, "aggns::serve(int)", "aggns::serve(int)").rows,
            0);
  EXPECT_EQ(totals(*ex, HistogramData::kCallSite, "aggns::serve(int)", "GET /serve").rows, 0);
  EXPECT_EQ(totals(*ex, HistogramData::kCallSite, "serve_function_first", "GET /serve2").rows, 0);
  EXPECT_EQ(totals(*ex, HistogramData::kCallSite, "GET /serve2", "serve_function_first").rows, 0);
  // twice() is called by the function (whichever of its two probes is innermost).
  Totals edge = totals(*ex, HistogramData::kCallSite, "aggns::twice", "serve");
  EXPECT_EQ(edge.count, 10);
  perfhat::shutdown();
}
