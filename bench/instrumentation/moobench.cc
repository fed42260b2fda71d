// MooBench-style overhead harness for libperfhat (Waller & Hasselbring; reference A6).
// System under test: a never-inlined method recursing to depth 10; the driver times each call
// chain and reports the time per method call (chain / depth) after discarding the warm-up half,
// as mean, median and 95% CI. Configurations:
//   no probe      the SUT compiled without the macro
//   disabled      probe compiled in, perfhat::set_enabled(false)
//   masked        this replica's variant (PERFHAT_VARIANT_MANIFEST) does not probe monitored()
//   scope excluded  PERFHAT_SCOPE leaves monitored() out
//   phase 1 only  filter configured, nothing relevant yet: per-function estimators only
//                 (every call counted, 1 in Config::timing_period = 16 calls timed)
//   phase 1 N=1   the same with every call timed (timing_period = 1): two clock reads per call
//   filtered out  Tigris ran and classified another function relevant, not this one
//   sampled out   every function relevant, sampler decides no (uniform, rate 0)
//   recorded      full sampler; spans go to an in-memory (counting) exporter
//   exported      full sampler; spans go over OTLP/HTTP protobuf to a loopback server
//   aggregated    full sampler, PERFHAT_EXPORT=aggregates: every call into the thread's
//                 histograms (site x caller), exported as rows to an in-memory exporter
// The floor is one clock read (TSC and steady_clock) measured in the same run.
//
// Usage: instr_moobench [chains=1000000] [depth=10] [only=<row name prefix>]
// `only` runs one configuration (plus the setup it needs), e.g. for
//   valgrind --tool=callgrind --toggle-collect='*monitored*' instr_moobench 20000 10 disabled
// where instructions per call = Ir of monitored / (chains x depth) is deterministic. The first
// call's registration (Probe::enter) runs from monitored()'s ".cold" clone, which the toggle
// switches off again, so it is not in that count; `--toggle-collect='*run_chains*'` counts it
// (subtract Engine::prepare, and the "no probe" row for the harness's clock reads).
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "common/cli.h"
#include "perfhat/exporter.hpp"
#include "perfhat/otlp_exporter.hpp"
#include "perfhat/perfhat.hpp"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace {

// noipa + the asm barrier on the result keep GCC from turning the recursion into a loop (it
// folds the probe-less version into a cmov otherwise): every level is a real call. Clang has no
// noipa; noinline and the barrier do it there.
#if defined(__clang__)
#define MOOBENCH_NOIPA
#else
#define MOOBENCH_NOIPA gnu::noipa
#endif
[[gnu::noinline, MOOBENCH_NOIPA]] uint64_t monitored_noprobe(int depth) {
  if (depth > 1) {
    uint64_t r = monitored_noprobe(depth - 1);
    asm volatile("" : "+r"(r));
    return r + 1;
  }
  return 1;
}

[[gnu::noinline, MOOBENCH_NOIPA]] uint64_t monitored(int depth) {
  PERFHAT_FUNCTION();
  if (depth > 1) {
    uint64_t r = monitored(depth - 1);
    asm volatile("" : "+r"(r));
    return r + 1;
  }
  return 1;
}

[[gnu::noinline]] void other_hot_function() { PERFHAT_FUNCTION(); }

// In-memory sink that counts and discards (keeping millions of spans would measure malloc).
class CountingExporter final : public perfhat::Exporter {
 public:
  perfhat::ExportResult export_batch(const perfhat::ExportBatch& b) override {
    spans += b.spans.size();
    return perfhat::ExportResult::kSuccess;
  }
  std::atomic<uint64_t> spans{0};
};

struct Stats {
  double mean, median, ci95, p99;
};

// Mean and CI over the middle 98% (MooBench's statistics.r trims the extremes too): on a shared
// VM a chain preempted for milliseconds would otherwise dominate the mean.
Stats summarize(std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  size_t lo = v.size() / 100, hi = v.size() - v.size() / 100;
  double sum = 0;
  for (size_t i = lo; i < hi; ++i) sum += v[i];
  double n = static_cast<double>(hi - lo);
  double mean = sum / n;
  double ss = 0;
  for (size_t i = lo; i < hi; ++i) ss += (v[i] - mean) * (v[i] - mean);
  double sd = std::sqrt(ss / (n - 1));
  return {mean, v[v.size() / 2], 1.96 * sd / std::sqrt(n), v[static_cast<size_t>(v.size() * 0.99)]};
}

using Clock = std::chrono::steady_clock;

std::vector<double> g_samples;  // preallocated once, reused

// flush_every > 0: export (untimed) every that many chains, so the per-thread ring never fills and
// the timed path is the recording itself rather than the drop path.
template <typename F>
Stats run_chains(F&& sut, size_t chains, int depth, size_t flush_every = 0) {
  g_samples.assign(chains, 0);
  for (size_t i = 0; i < chains; ++i) {
    if (flush_every && i % flush_every == 0) perfhat::flush();
    auto t0 = Clock::now();
    sut(depth);
    auto t1 = Clock::now();
    g_samples[i] = std::chrono::duration<double, std::nano>(t1 - t0).count() / depth;
  }
  std::vector<double> kept(g_samples.begin() + chains / 2, g_samples.end());  // skip warm-up
  return summarize(kept);
}

Stats clock_floor(size_t n, bool tsc) {
  g_samples.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    uint64_t x = 0;
    for (int k = 0; k < 10; ++k) {
#if defined(__x86_64__)
      if (tsc) {
        x += __rdtsc();
        continue;
      }
#endif
      x += static_cast<uint64_t>(Clock::now().time_since_epoch().count());
    }
    asm volatile("" : : "r"(x));
    auto t1 = Clock::now();
    g_samples[i] = std::chrono::duration<double, std::nano>(t1 - t0).count() / 10;
  }
  std::vector<double> kept(g_samples.begin() + n / 2, g_samples.end());
  return summarize(kept);
}

const char* g_only = nullptr;
bool want(const char* name) { return g_only == nullptr || std::string(name).rfind(g_only, 0) == 0; }

void row(const char* name, const Stats& s, const Stats& base, const char* note = "") {
  std::printf("| %-14s | %8.2f | %8.2f | ±%6.2f | %8.2f | %+8.2f | %s\n", name, s.mean, s.median,
              s.ci95, s.p99, s.mean - base.mean, note);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("MooBench-style probe overhead: ns per monitored call in each configuration.",
               "instr_moobench");
  perfhat::cli::configure(app, "0.1.0");
  size_t chains = 1000000;
  int depth = 10;
  std::string only;
  app.add_option("chains", chains, "call chains per configuration")
      ->check(perfhat::cli::positiveInteger())
      ->capture_default_str();
  app.add_option("depth", depth, "calls per chain")
      ->check(perfhat::cli::positiveInteger())
      ->capture_default_str();
  app.add_option("only", only, "run only the configurations whose row name starts with this");
  perfhat::cli::parse(app, argc, argv);
  g_only = only.empty() ? nullptr : only.c_str();
  std::printf(
      "MooBench-style run: %zu chains x depth %d, warm-up half discarded; ns per call "
      "(mean* and CI over the middle 98%%)\n",
      chains, depth);
  std::printf("| %-14s | %8s | %8s | %7s | %8s | %8s |\n", "config", "mean*", "median", "95% CI",
              "p99", "overhead");
  std::printf("|----------------|----------|----------|---------|----------|----------|\n");

  Stats zero{0, 0, 0, 0};
  if (want("clock")) {
    row("clock steady", clock_floor(chains, false), zero, "one steady_clock::now()");
    row("clock TSC", clock_floor(chains, true), zero, "one rdtsc (the probe's clock)");
  }
  Stats base =
      want("no probe") || g_only == nullptr ? run_chains(monitored_noprobe, chains, depth) : zero;
  if (want("no probe")) row("no probe", base, base);

  perfhat::Config cfg;
  cfg.span_ring_per_thread = 1 << 16;
  cfg.export_interval_s = 0.05;
  cfg.batch_size = 4096;
  cfg.queue_capacity = 1 << 20;

  // disabled
  auto sink = std::make_shared<CountingExporter>();
  cfg.sampler = "none";
  if (want("disabled")) {
    perfhat::init(cfg, sink);
    perfhat::set_enabled(false);
    row("disabled", run_chains(monitored, chains, depth), base);
    perfhat::set_enabled(true);
    perfhat::shutdown();
  }

  // masked: this replica's variant (a perfhat-plan manifest) probes another function, not
  // monitored(); scope excluded: PERFHAT_SCOPE leaves monitored() out. Both take the same path.
  if (want("masked") || want("scope excluded")) {
    cfg.sampler = "full";
    if (want("masked")) {
      std::string path = "/tmp/perfhat_moobench_manifest_" + std::to_string(::getpid()) + ".json";
      if (FILE* f = std::fopen(path.c_str(), "w")) {
        std::fputs(
            "{\"release\":\"moo\",\"variants\":[{\"id\":0,\"units\":[\"(anonymous "
            "namespace)::other_hot_function()\"]},{\"id\":1,\"units\":[\"(anonymous "
            "namespace)::monitored(int)\"]}],\"assignment\":[0,1]}",
            f);
        std::fclose(f);
      }
      cfg.variant_manifest = path;
      cfg.replica = 0;
      perfhat::init(cfg, sink);
      row("masked", run_chains(monitored, chains, depth), base,
          perfhat::last_error().empty() ? "variant 0 of 2 probes another function"
                                        : "CHECK manifest");
      perfhat::shutdown();
      std::remove(path.c_str());
      cfg.variant_manifest.clear();
      cfg.replica = -1;
    }
    if (want("scope excluded")) {
      cfg.scope = "-*monitored*";
      perfhat::init(cfg, sink);
      row("scope excluded", run_chains(monitored, chains, depth), base, "PERFHAT_SCOPE");
      perfhat::shutdown();
      cfg.scope.clear();
    }
    cfg.sampler = "none";
  }

  // phase 1 only: a filter, no cycle has run yet -> empty relevant set
  cfg.filter = "more frequent";
  cfg.sampler = "full";
  cfg.cycle_s = 1e9;
  if (want("phase 1 only")) {
    perfhat::init(cfg, sink);
    row("phase 1 only", run_chains(monitored, chains, depth), base, "1 in 16 calls timed");
    perfhat::shutdown();
  }
  if (want("phase 1 N=1")) {
    cfg.timing_period = 1;
    perfhat::init(cfg, sink);
    row("phase 1 N=1", run_chains(monitored, chains, depth), base, "every call timed");
    perfhat::shutdown();
    cfg.timing_period = perfhat::Config{}.timing_period;
  }

  // filtered out: other_hot_function is the most frequent; monitored() is not relevant
  if (want("filtered out")) {
    perfhat::init(cfg, sink);
    for (size_t i = 0; i < 40 * chains * depth / 10; ++i) other_hot_function();
    for (int i = 0; i < 10; ++i) monitored(depth);  // known to Tigris, less frequent
    perfhat::analyze_now();
    row("filtered out", run_chains(monitored, chains, depth), base,
        perfhat::counters().relevant_functions == 1 ? "1 relevant function" : "CHECK relevance");
    perfhat::shutdown();
  }

  // sampled out: everything relevant, sampler says no
  cfg.filter.clear();
  cfg.sampler = "uniform";
  cfg.sampling_rate = 0;
  if (want("sampled out")) {
    perfhat::init(cfg, sink);
    row("sampled out", run_chains(monitored, chains, depth), base);
    perfhat::shutdown();
  }
  if (want("aggregated")) {
    cfg.sampler = "full";
    cfg.export_mode = "aggregates";
    auto before = perfhat::counters();
    perfhat::init(cfg, sink);
    // A flush every 1,000 chains (10,000 calls): the thread's ring holds 32,768 records.
    Stats agg = run_chains(monitored, chains, depth, 1000);
    perfhat::shutdown();
    auto after = perfhat::counters();
    cfg.export_mode = "spans";
    char note[160];
    std::snprintf(
        note, sizeof(note), "%llu calls recorded, %llu dropped, %llu rows exported",
        (unsigned long long)(after.spans_recorded - before.spans_recorded),
        (unsigned long long)(after.records_dropped_histogram - before.records_dropped_histogram),
        (unsigned long long)(after.histogram_rows_exported - before.histogram_rows_exported));
    row("aggregated", agg, base, note);
  }
  if (!want("recorded") && !want("exported")) return 0;

  // recorded in memory
  cfg.sampler = "full";
  if (want("recorded")) {
    auto before = perfhat::counters();
    sink->spans = 0;
    perfhat::init(cfg, sink);
    Stats rec = run_chains(monitored, chains, depth, 4000);
    perfhat::shutdown();
    auto after = perfhat::counters();
    char note[160];
    std::snprintf(note, sizeof(note), "%llu calls recorded, %llu of them as rows (ring full)",
                  (unsigned long long)(after.spans_recorded - before.spans_recorded),
                  (unsigned long long)(after.spans_to_aggregates - before.spans_to_aggregates));
    row("recorded", rec, base, note);
  }
  if (!want("exported")) return 0;

  // exported over loopback OTLP/HTTP protobuf
  httplib::Server srv;
  std::atomic<uint64_t> bytes{0}, posts{0};
  srv.Post("/v1/traces", [&](const httplib::Request& q, httplib::Response& r) {
    bytes += q.body.size();
    ++posts;
    r.status = 200;
  });
  srv.Post("/v1/metrics", [&](const httplib::Request&, httplib::Response& r) { r.status = 200; });
  // Calls that find the span ring full are sent as aggregate rows (as to perfhat-handler).
  srv.Post("/v1/aggregates",
           [&](const httplib::Request&, httplib::Response& r) { r.status = 200; });
  int port = srv.bind_to_any_port("127.0.0.1");
  std::thread th([&] { srv.listen_after_bind(); });
  for (int i = 0; i < 2000 && !srv.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  cfg.endpoint = "http://127.0.0.1:" + std::to_string(port);
  auto before = perfhat::counters();
  perfhat::init(cfg);
  Stats exp = run_chains(monitored, chains, depth);
  perfhat::shutdown();
  auto after = perfhat::counters();
  char note[160];
  std::snprintf(note, sizeof(note),
                "%llu exported in %llu POSTs (%.1f MB), %llu as rows, %llu lost",
                (unsigned long long)(after.spans_exported - before.spans_exported),
                (unsigned long long)posts.load(), bytes.load() / 1e6,
                (unsigned long long)(after.spans_to_aggregates - before.spans_to_aggregates),
                (unsigned long long)(after.spans_dropped_export - before.spans_dropped_export));
  row("exported", exp, base, note);
  srv.stop();
  th.join();
  return 0;
}
