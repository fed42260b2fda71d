// Engine behaviour through the public macros, with the in-memory exporter and an injected clock.
#include "engine.h"
#include "engine_internal.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <exception>
#include <set>
#include <stdexcept>
#include <thread>

#include "perfhat/memory_exporter.hpp"
#include "perfhat/perfhat.hpp"

namespace {

std::atomic<uint64_t> g_fake_ns{1'000'000'000};
uint64_t fake_clock() { return g_fake_ns.fetch_add(100, std::memory_order_relaxed); }

struct Env : ::testing::Environment {
  void SetUp() override { perfhat::detail::set_tick_source(&fake_clock); }
};
[[maybe_unused]] auto* const g_env = ::testing::AddGlobalTestEnvironment(new Env);

int g_attr_evaluations = 0;
int expensive_attribute() { return ++g_attr_evaluations; }

}  // namespace

namespace testns {
[[gnu::noinline]] int work(int x) {
  PERFHAT_FUNCTION();
  PERFHAT_ATTRIBUTE("test.value", expensive_attribute());
  PERFHAT_RESULT_SIZE(x);
  PERFHAT_LOOP_ITERATIONS(x * 2);
  return x + 1;
}
[[gnu::noinline]] int outer(int x) {
  PERFHAT_FUNCTION();
  return work(x) * 2;
}
[[gnu::noinline]] void handle(int x) {
  PERFHAT_REQUEST("GET /tasks");
  outer(x);
}
[[gnu::noinline]] void thrower() {
  PERFHAT_FUNCTION();
  throw std::runtime_error("boom");
}
template <int N>
[[gnu::noinline]] void freq() {
  PERFHAT_FUNCTION();
}
namespace hidden {
[[gnu::noinline]] void secret() { PERFHAT_FUNCTION(); }
}  // namespace hidden
// Entered while disabled, left while enabled: the probe stays inactive to its end.
[[gnu::noinline]] int enables_inside(int x) {
  PERFHAT_FUNCTION();
  perfhat::set_enabled(true);
  PERFHAT_RESULT_SIZE(expensive_attribute());  // inactive probe: never evaluated
  return x + 1;
}
// Entered while enabled, left while disabled: the active probe completes its span.
[[gnu::noinline]] int disables_inside(int x) {
  PERFHAT_FUNCTION();
  perfhat::set_enabled(false);
  PERFHAT_RESULT_SIZE(x);
  return x + 1;
}
}  // namespace testns

namespace {

std::shared_ptr<perfhat::MemoryExporter> start(const perfhat::Config& c) {
  auto ex = std::make_shared<perfhat::MemoryExporter>();
  EXPECT_TRUE(perfhat::init(c, ex)) << perfhat::last_error();
  return ex;
}

perfhat::Config full() {
  perfhat::Config c;
  c.sampler = "full";
  c.service_name = "engine-test";
  return c;
}

std::vector<perfhat::SpanData> spans_named(const perfhat::MemoryExporter& ex,
                                           const std::string& needle) {
  std::vector<perfhat::SpanData> out;
  for (const auto& s : ex.spans()) {
    if (s.function.find(needle) != std::string::npos) out.push_back(s);
  }
  return out;
}

TEST(InstrEngine, FullSamplerEmptyFilterExportsEveryCall) {
  auto ex = start(full());
  for (int i = 0; i < 10; ++i) testns::work(i);
  perfhat::flush();
  auto spans = spans_named(*ex, "testns::work");
  ASSERT_EQ(spans.size(), 10u);
  const auto& s = spans[3];
  EXPECT_EQ(s.function, "int testns::work(int)");
  EXPECT_EQ(s.mangled, "_ZN6testns4workEi");  // resolved from .symtab of this PIE test binary
  EXPECT_NE(s.file.find("engine_test.cc"), std::string::npos);
  EXPECT_GT(s.line, 0u);
  EXPECT_EQ(s.result_size, 3);
  EXPECT_EQ(s.loop_iterations, 6);
  EXPECT_DOUBLE_EQ(s.weight, 1.0);
  EXPECT_GT(s.end_unix_ns, s.start_unix_ns);
  ASSERT_EQ(s.attributes.size(), 1u);
  EXPECT_EQ(s.attributes[0].key, "test.value");
  EXPECT_EQ(ex->calls_of("testns::work"), 10u);
  perfhat::shutdown();
}

TEST(InstrEngine, NoneSamplerRecordsPhaseOneOnlyAndSkipsAttributes) {
  auto ex = start([] {
    auto c = full();
    c.sampler = "none";
    return c;
  }());
  int before = g_attr_evaluations;
  for (int i = 0; i < 25; ++i) testns::work(i);
  perfhat::flush();
  EXPECT_TRUE(spans_named(*ex, "testns::work").empty());
  EXPECT_EQ(ex->calls_of("testns::work"), 25u);
  EXPECT_EQ(g_attr_evaluations, before);  // attribute expression never evaluated
  perfhat::shutdown();
}

TEST(InstrEngine, RequestRootParentsNestedSpans) {
  auto ex = start(full());
  testns::handle(4);
  perfhat::flush();
  auto req = spans_named(*ex, "handle");
  auto out = spans_named(*ex, "testns::outer");
  auto work = spans_named(*ex, "testns::work");
  ASSERT_EQ(req.size(), 1u);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(work.size(), 1u);
  EXPECT_TRUE(req[0].is_request);
  EXPECT_EQ(req[0].name, "GET /tasks");
  EXPECT_EQ(req[0].parent_span_id, 0u);
  EXPECT_EQ(out[0].parent_span_id, req[0].span_id);
  EXPECT_EQ(work[0].parent_span_id, out[0].span_id);
  EXPECT_EQ(work[0].trace_id, req[0].trace_id);
  perfhat::shutdown();
}

TEST(InstrEngine, UnsampledRequestRecordsNoSpans) {
  auto ex = start([] {
    auto c = full();
    c.sampler = "uniform";
    c.sampling_rate = 0;
    return c;
  }());
  for (int i = 0; i < 20; ++i) testns::handle(i);
  perfhat::flush();
  EXPECT_TRUE(ex->spans().empty());
  EXPECT_EQ(ex->calls_of("testns::outer"), 20u);
  perfhat::shutdown();
}

TEST(InstrEngine, ExceptionsCountAsErrors) {
  auto ex = start(full());
  EXPECT_THROW(testns::thrower(), std::runtime_error);
  perfhat::flush();
  auto spans = spans_named(*ex, "thrower");
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_TRUE(spans[0].error);
  uint64_t errors = 0;
  for (const auto& a : ex->aggregates()) {
    if (a.function.find("thrower") != std::string::npos) errors += a.errors;
  }
  EXPECT_EQ(errors, 1u);
  perfhat::shutdown();
}

// The probes read the runtime's own uncaught-exception counter (found without throwing), not
// the fallback that calls std::uncaught_exceptions() at every probe's end; an exception is seen
// by it, and the counter is left as it was.
TEST(InstrEngine, ProbesReadTheRuntimesUncaughtExceptionCounter) {
  auto ex = start(full());
  testns::handle(1);  // registers this thread
  const perfhat::detail::Hot* h = perfhat::detail::t_hot;
  ASSERT_NE(h, nullptr);
  EXPECT_NE(h->eh_uncaught, &perfhat::detail::kAlwaysCheck);
  EXPECT_EQ(*h->eh_uncaught, 0u);
  EXPECT_EQ(std::uncaught_exceptions(), 0);
  struct Seen {
    const unsigned* counter;
    unsigned* out;
    ~Seen() { *out = *counter; }
  };
  unsigned during = 0;
  try {
    Seen s{h->eh_uncaught, &during};
    throw std::runtime_error("x");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(during, 1u);
  EXPECT_EQ(*h->eh_uncaught, 0u);
  perfhat::shutdown();
}

TEST(InstrEngine, TigrisFilterSelectsMostFrequent) {
  auto c = full();
  c.filter = "most frequent";
  auto ex = start(c);
  auto run = [] {
    testns::freq<0>();
    for (int i = 0; i < 2; ++i) testns::freq<1>();
    for (int i = 0; i < 4; ++i) testns::freq<2>();
    for (int i = 0; i < 8; ++i) testns::freq<3>();
    for (int i = 0; i < 16; ++i) testns::freq<4>();
    for (int i = 0; i < 300; ++i) testns::freq<5>();
  };
  run();  // phase 1 only: nothing is relevant before the first cycle
  perfhat::flush();
  EXPECT_TRUE(spans_named(*ex, "freq").empty());
  perfhat::analyze_now();
  EXPECT_GE(perfhat::counters().relevant_functions, 1u);
  ex->clear();
  run();
  perfhat::flush();
  // __PRETTY_FUNCTION__ spells it "[with int N = 5]" (GCC) or "[N = 5]" (Clang).
  std::set<std::string> recorded;
  for (const auto& s : spans_named(*ex, "freq")) recorded.insert(s.function);
  ASSERT_EQ(recorded.size(), 1u);
  EXPECT_NE(recorded.begin()->find("N = 5]"), std::string::npos) << *recorded.begin();
  // An empty filter makes every probe relevant again, at run time.
  ASSERT_TRUE(perfhat::set_filter(""));
  ex->clear();
  testns::freq<0>();
  perfhat::flush();
  EXPECT_EQ(spans_named(*ex, "freq").size(), 1u);
  EXPECT_FALSE(perfhat::set_filter("most frequnt"));
  EXPECT_NE(perfhat::last_error().find("column 6"), std::string::npos);
  perfhat::shutdown();
}

TEST(InstrEngine, ScopeDenyExcludesSites) {
  auto c = full();
  c.scope = "-*hidden::*";
  auto ex = start(c);
  testns::hidden::secret();
  testns::work(1);
  perfhat::flush();
  EXPECT_TRUE(spans_named(*ex, "secret").empty());
  EXPECT_EQ(ex->calls_of("secret"), 0u);
  EXPECT_EQ(spans_named(*ex, "testns::work").size(), 1u);
  perfhat::shutdown();
}

TEST(InstrEngine, InvalidFilterDisablesProbesButAppRuns) {
  auto c = full();
  c.filter = "(more frequent";
  auto ex = std::make_shared<perfhat::MemoryExporter>();
  EXPECT_FALSE(perfhat::init(c, ex));
  EXPECT_NE(perfhat::last_error().find("PERFHAT_FILTER: column 15"), std::string::npos)
      << perfhat::last_error();
  EXPECT_EQ(testns::work(1), 2);
  perfhat::flush();
  EXPECT_TRUE(ex->spans().empty());
  c.sampler = "bogus";
  c.filter.clear();
  EXPECT_FALSE(perfhat::init(c, ex));
  EXPECT_NE(perfhat::last_error().find("unknown sampler 'bogus'"), std::string::npos);
}

TEST(InstrEngine, ThreadsAggregateExactlyAndSurviveExit) {
  auto c = full();
  c.sampler = "none";
  auto ex = start(c);
  std::vector<std::thread> ts;
  ts.reserve(4);
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([] {
      for (int i = 0; i < 5000; ++i) testns::outer(i);
    });
  }
  for (auto& t : ts) t.join();
  perfhat::flush();
  EXPECT_EQ(ex->calls_of("testns::outer"), 20000u);
  EXPECT_EQ(ex->calls_of("testns::work"), 20000u);
  perfhat::shutdown();
}

// A burst faster than the export: calls that find the span ring full become aggregate rows,
// so spans + row counts are exactly the calls made (issue #19).
TEST(InstrEngine, FullRingSendsCallsToAggregates) {
  auto c = full();
  c.span_ring_per_thread = 16;
  c.export_interval_s = 3600;  // only flush() exports (and a half-full ring, see below)
  auto ex = start(c);
  auto before = perfhat::counters();
  std::thread([] {
    for (int i = 0; i < 100; ++i) testns::freq<7>();
  }).join();
  perfhat::flush();
  auto after = perfhat::counters();
  EXPECT_EQ(after.spans_recorded - before.spans_recorded, 100u);
  EXPECT_EQ(after.spans_dropped_ring - before.spans_dropped_ring, 0u);
  const size_t spans = spans_named(*ex, "freq").size();
  // The ring holds 16; a half-full ring wakes the export, which may drain it mid-burst.
  EXPECT_GE(spans, 16u);
  double rows = 0;
  for (const auto& h : ex->histograms()) {
    if (h.data.kind == perfhat::HistogramData::kFunction &&
        h.site.function.find("N = 7]") != std::string::npos) {
      rows += h.data.count();
    }
  }
  EXPECT_EQ(static_cast<double>(spans) + rows, 100.0);
  EXPECT_EQ(after.spans_to_aggregates - before.spans_to_aggregates, 100u - spans);
  EXPECT_EQ(ex->calls_of("N = 7]"), 100u);
  perfhat::shutdown();
}

TEST(InstrEngine, DisabledProbesDoNothing) {
  auto ex = start(full());
  perfhat::set_enabled(false);
  testns::work(1);
  perfhat::set_enabled(true);
  perfhat::flush();
  EXPECT_TRUE(spans_named(*ex, "testns::work").empty());
  perfhat::shutdown();
}

// The exit work is decided by the probe's own state, not by the mode at exit: a mode change in
// the middle of a call neither leaks nor fabricates a span, and the span context stays balanced.
TEST(InstrEngine, ModeChangeMidCallKeepsEachProbeBalanced) {
  auto ex = start(full());
  int evaluations = g_attr_evaluations;
  perfhat::set_enabled(false);
  EXPECT_EQ(testns::enables_inside(1), 2);
  EXPECT_EQ(g_attr_evaluations, evaluations);
  EXPECT_EQ(testns::disables_inside(4), 5);
  perfhat::set_enabled(true);
  testns::outer(3);
  perfhat::flush();
  EXPECT_TRUE(spans_named(*ex, "enables_inside").empty());
  EXPECT_EQ(ex->calls_of("enables_inside"), 0u);
  auto left = spans_named(*ex, "disables_inside");
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].result_size, 4);
  EXPECT_EQ(left[0].parent_span_id, 0u);
  EXPECT_EQ(ex->calls_of("disables_inside"), 1u);
  // Later spans nest as usual: outer is a root, work its child.
  auto outer = spans_named(*ex, "testns::outer");
  auto work = spans_named(*ex, "testns::work");
  ASSERT_EQ(outer.size(), 1u);
  ASSERT_EQ(work.size(), 1u);
  EXPECT_EQ(outer[0].parent_span_id, 0u);
  EXPECT_EQ(work[0].parent_span_id, outer[0].span_id);
  perfhat::shutdown();
}

TEST(InstrEngine, RuntimeSamplingRateAndCycle) {
  auto c = full();
  c.sampler = "uniform";
  c.sampling_rate = 0.5;
  auto ex = start(c);
  EXPECT_DOUBLE_EQ(perfhat::sampling_rate(), 0.5);
  perfhat::set_sampling_rate(0.1);
  EXPECT_DOUBLE_EQ(perfhat::sampling_rate(), 0.1);
  // Out-of-request calls use the rate as a per-call Bernoulli; weights unbias the counts.
  for (int i = 0; i < 20000; ++i) testns::freq<8>();
  perfhat::flush();
  auto spans = spans_named(*ex, "N = 8");
  EXPECT_GT(spans.size(), 1500u);
  EXPECT_LT(spans.size(), 2500u);
  ASSERT_FALSE(spans.empty());
  EXPECT_NEAR(spans[0].weight, 10.0, 1e-9);
  perfhat::set_analysis_cycle(5);
  perfhat::shutdown();
}

TEST(InstrConfig, FromEnvironment) {
  setenv("PERFHAT_SAMPLER", "uniform", 1);
  setenv("PERFHAT_SAMPLING_RATE", "0.25", 1);
  setenv("PERFHAT_CYCLE_S", "abc", 1);
  setenv("OTEL_SERVICE_NAME", "svc", 1);
  setenv("PERFHAT_FILTER", "more frequent", 1);
  setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1", 1);
  setenv("PERFHAT_ENDPOINT", "http://127.0.0.1:2", 1);
  auto c = perfhat::Config::from_env();
  EXPECT_EQ(c.sampler, "uniform");
  EXPECT_DOUBLE_EQ(c.sampling_rate, 0.25);
  EXPECT_DOUBLE_EQ(c.cycle_s, 120);  // unparseable: default kept
  EXPECT_EQ(c.service_name, "svc");
  EXPECT_EQ(c.filter, "more frequent");
  EXPECT_EQ(c.endpoint, "http://127.0.0.1:2");  // PERFHAT_ENDPOINT wins
  for (const char* v :
       {"PERFHAT_SAMPLER", "PERFHAT_SAMPLING_RATE", "PERFHAT_CYCLE_S", "OTEL_SERVICE_NAME",
        "PERFHAT_FILTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "PERFHAT_ENDPOINT"}) {
    unsetenv(v);
  }
}

}  // namespace
