#include "representativeness_study.h"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "perfhat/exporter.hpp"
#include "representativeness_app.h"

namespace repstudy {

const char* segment_name(int segment) {
  switch (segment) {
    case kStationary:
      return "stationary";
    case kSeasonal:
      return "seasonal";
    case kBurst:
      return "burst";
    default:
      return "whole run";
  }
}

int users(int segment, double t, double len, const Options& o) {
  const int extra = o.peak_users - o.typical_users;
  if (segment == kSeasonal) {
    // Two smooth waves typical -> peak -> typical (von Kistowski's seasonal pattern).
    double phase = std::fmod(t, len / 2) / (len / 2);
    return o.typical_users +
           static_cast<int>(std::lround(extra * 0.5 * (1 - std::cos(6.283185307179586 * phase))));
  }
  if (segment == kBurst) {
    // Three isolated bursts to the peak, each a twelfth of the segment (at most 0.5 s).
    double period = len / 3;
    double pos = std::fmod(t, period);
    return pos >= period / 2 && pos < period / 2 + std::min(0.5, period / 4) ? o.peak_users
                                                                             : o.typical_users;
  }
  return o.typical_users;
}

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::kNom:
      return "NOM";
    case Mode::kNone:
      return "none";
    case Mode::kFull:
      return "FUM";
    case Mode::kAdaptive:
      return "ADP";
    case Mode::kUniform:
      return "UNI";
    case Mode::kInverse:
      return "INV";
    case Mode::kUniformMatched:
      return "UNI≈ADP";
  }
  return "?";
}

const char* sampler_name(Mode m) {
  switch (m) {
    case Mode::kNom:
      return nullptr;
    case Mode::kNone:
      return "none";
    case Mode::kFull:
      return "full";
    case Mode::kAdaptive:
      return "adaptive";
    case Mode::kUniform:
    case Mode::kUniformMatched:
      return "uniform";
    case Mode::kInverse:
      return "inverse";
  }
  return nullptr;
}

double RunResult::sampled_share() const {
  return whole().requests
             ? static_cast<double>(whole().sampled_requests) / static_cast<double>(whole().requests)
             : 0;
}

namespace {

// Per-function sums of latency and allocated bytes.
struct Acc {
  uint64_t n = 0, bytes_n = 0;
  uint64_t timed = 0;  // calls in latency_ns (population: phase 1's timed calls; sample: n)
  double latency_ns = 0, bytes = 0;
  void add(const Acc& o) {
    n += o.n;
    timed += o.timed;
    bytes_n += o.bytes_n;
    latency_ns += o.latency_ns;
    bytes += o.bytes;
  }
};
using AccMap = std::map<std::string, Acc, std::less<>>;

// Receives the engine's exports. Everything exported while `segment` holds s belongs to segment
// s: the driver drains the users and flushes before it advances the segment.
class StudyExporter final : public perfhat::Exporter {
 public:
  explicit StudyExporter(const std::atomic<int>* segment) : segment_(segment) {}
  perfhat::ExportResult export_batch(const perfhat::ExportBatch& b) override {
    int seg = segment_->load();
    if (seg < 0 || seg >= kSegments) return perfhat::ExportResult::kSuccess;  // warm-up
    std::lock_guard<std::mutex> l(mu);
    for (const auto& s : b.spans) {
      if (s.is_request) {
        ++sampled_requests[seg];
        continue;
      }
      Acc& a = sample[seg][s.name];
      ++a.n;
      ++a.timed;
      a.latency_ns += static_cast<double>(s.end_unix_ns - s.start_unix_ns);
      if (s.result_size >= 0) {
        ++a.bytes_n;
        a.bytes += static_cast<double>(s.result_size);
      }
    }
    for (const auto& g : b.aggregates) {
      if (g.name != g.function) continue;  // request roots: their response time drives ADP
      Acc& a = population[seg][g.name];
      a.n += g.count;
      // sum_ns extrapolates the interval's timed calls to `count`, which also holds the calls
      // still running at export time: take back the timed sum, exact when every call is timed.
      if (g.count > 0 && g.timed_count > 0) {
        a.latency_ns +=
            g.sum_ns / static_cast<double>(g.count) * static_cast<double>(g.timed_count);
        a.timed += g.timed_count;
      }
      a.bytes_n += g.result_size_n;
      a.bytes += g.result_size_sum;
    }
    return perfhat::ExportResult::kSuccess;
  }
  std::mutex mu;
  std::array<AccMap, kSegments> sample, population;
  std::array<uint64_t, kSegments> sampled_requests{};

 private:
  const std::atomic<int>* segment_;
};

// RMSE over the functions of the ground truth of (sample mean - population mean); a function that
// was called but never sampled counts with its whole population mean as the error.
void score(const AccMap& population, const AccMap& sample, SegmentResult& r) {
  double se_bytes = 0, se_lat = 0, lat_sum = 0;
  size_t n_bytes = 0;
  r.functions = r.functions_sampled = 0;
  r.spans = 0;
  for (const auto& [fn, s] : sample) r.spans += s.n;
  for (const auto& [fn, p] : population) {
    if (p.n == 0) continue;
    ++r.functions;
    auto it = sample.find(fn);
    const Acc* s = it == sample.end() || it->second.n == 0 ? nullptr : &it->second;
    if (s) ++r.functions_sampled;
    double truth = p.timed ? p.latency_ns / static_cast<double>(p.timed) : 0;
    double err = s ? s->latency_ns / static_cast<double>(s->timed) - truth : truth;
    se_lat += err * err;
    lat_sum += truth;
    if (p.bytes_n > 0) {
      double tb = p.bytes / static_cast<double>(p.bytes_n);
      double eb = s && s->bytes_n ? s->bytes / static_cast<double>(s->bytes_n) - tb : tb;
      se_bytes += eb * eb;
      ++n_bytes;
    }
  }
  if (r.functions == 0) return;
  r.rmse_latency_ns = std::sqrt(se_lat / static_cast<double>(r.functions));
  r.mean_latency_ns = lat_sum / static_cast<double>(r.functions);
  if (n_bytes) r.rmse_bytes = std::sqrt(se_bytes / static_cast<double>(n_bytes));
}

double process_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double load_average() {
  double l = 0;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &l) != 1) l = 0;
    std::fclose(f);
  }
  return l;
}

}  // namespace

RunResult run_once(Mode mode, const Options& o, uint64_t seed) {
  RunResult r;
  r.mode = mode;
  std::atomic<int> segment{-1};  // -1: warm-up, not scored
  auto ex = std::make_shared<StudyExporter>(&segment);
  const bool instrumented = mode != Mode::kNom;
  if (instrumented) {
    perfhat::Config c;
    c.service_name = "representativeness";
    c.sampler = sampler_name(mode);
    c.sampling_rate = o.sampling_rate;
    // Only the driver exports: every 0.5 s while the users run, and at each segment's end with
    // no call in flight. A call running at an export is counted in that window but timed in the
    // next one, and the engine skips a function whose count did not grow; a background export
    // during the end-of-segment drain could thus push a timing into the next segment. The ring
    // holds more than 0.5 s of spans per thread.
    c.export_interval_s = 1e9;
    c.span_ring_per_thread = 1 << 17;
    c.queue_capacity = 1 << 21;
    c.batch_size = 4096;
    // Phase 1 times every call (the engine's default times 1 in 16 and extrapolates): the
    // latency ground truth must be the mean of all calls, not an estimate.
    c.timing_period = 1;
    if (!perfhat::init(c, ex)) throw std::runtime_error("perfhat::init: " + perfhat::last_error());
  }
  auto serve = instrumented ? &instrumented::serve : &plain::serve;

  const int workers = std::max(o.peak_users, o.typical_users);
  std::atomic<int> target{0};
  std::atomic<int> inflight{0};
  std::atomic<double> worker_cpu{0};
  std::atomic<uint64_t> checksum{0};
  std::vector<std::array<uint64_t, kSegments>> served(workers);
  std::atomic<int> warm{0};
  std::vector<std::thread> ts;
  ts.reserve(workers);
  perfhat::Counters before = perfhat::counters();
  for (int w = 0; w < workers; ++w) {
    ts.emplace_back([&, w] {
      // One unscored request of each type first: site registration, the thread's span ring and
      // slot pages and symbol resolution are one-time costs, not per-request monitoring cost.
      Rng warm_rng(~seed);
      uint64_t h = 0;
      for (int type = 0; type < kRequestTypes; ++type) h += serve(type, warm_rng);
      warm.fetch_add(1);
      for (int v; (v = warm.load()) <= workers;) warm.wait(v);  // until the driver starts
      double c0 = thread_cpu_s();
      Rng rng(seed * 7919 + static_cast<uint64_t>(w) * 104729 + 1);
      std::array<uint64_t, kSegments> mine{};
      for (;;) {
        // Announce before checking the target: the driver's drain (target = 0, then wait for
        // inflight == 0) can then never miss a request that is about to start.
        inflight.fetch_add(1);
        int tgt = target.load();
        if (tgt < 0) {
          inflight.fetch_sub(1);
          break;
        }
        if (w >= tgt) {
          inflight.fetch_sub(1);
          target.wait(tgt);  // futex: idle users cost no CPU
          continue;
        }
        int seg = segment.load(std::memory_order_relaxed);
        h += serve(rng.request_type(), rng);
        inflight.fetch_sub(1);
        if (++mine[seg] % static_cast<uint64_t>(o.page_requests) == 0 && o.think_ms > 0) {
          double think = -std::log(1 - rng.uniform()) * o.think_ms;
          std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(think));
        }
      }
      served[w] = mine;
      checksum.fetch_add(h);
      double c = thread_cpu_s() - c0;
      double cur = worker_cpu.load();
      while (!worker_cpu.compare_exchange_weak(cur, cur + c)) {
      }
    });
  }

  while (warm.load() < workers) std::this_thread::yield();
  if (instrumented) perfhat::flush();  // warm-up spans go to segment -1, i.e. nowhere
  double cpu0 = process_cpu_s();
  warm.store(workers + 1);
  warm.notify_all();
  auto t_start = std::chrono::steady_clock::now();
  for (int s = 0; s < kSegments; ++s) {
    segment.store(s);
    auto t0 = std::chrono::steady_clock::now();
    double last_flush = 0, rate_sum = 0;
    int rate_n = 0;
    // NOLINTNEXTLINE(clang-analyzer-security.FloatLoopCounter): t is read from the clock
    for (double t = 0; t < o.segment_s;
         t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()) {
      // Periodic export, not too close to the segment's end (see the Config comment above).
      if (instrumented && t - last_flush >= 0.5 && t + 0.25 < o.segment_s) {
        perfhat::flush();
        last_flush = t;
      }
      if (instrumented) {
        rate_sum += perfhat::sampling_rate();
        ++rate_n;
      }
      int u = users(s, t, o.segment_s, o);
      if (target.exchange(u) != u) target.notify_all();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    // Drain the users, then export: this segment's spans and aggregates, all tagged s.
    target.store(0);
    target.notify_all();
    while (inflight.load() != 0) std::this_thread::yield();
    if (instrumented) perfhat::flush();
    r.seg[s].wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.seg[s].mean_rate = rate_n ? rate_sum / rate_n : 0;
  }
  target.store(-1);
  target.notify_all();
  for (auto& t : ts) t.join();
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  if (instrumented) {
    perfhat::shutdown();  // final export (empty: every segment was flushed) is part of the cost
    r.counters = perfhat::counters();
    // The engine's counters are process totals: keep this run's share.
    r.counters.spans_recorded -= before.spans_recorded;
    r.counters.spans_exported -= before.spans_exported;
    r.counters.spans_dropped_ring -= before.spans_dropped_ring;
    r.counters.spans_dropped_queue -= before.spans_dropped_queue;
    r.counters.spans_dropped_export -= before.spans_dropped_export;
  }
  r.process_cpu_s = process_cpu_s() - cpu0;
  r.worker_cpu_s = worker_cpu.load();
  r.load_avg = load_average();
  r.checksum = checksum.load();

  std::lock_guard<std::mutex> l(ex->mu);
  AccMap all_pop, all_sample;
  SegmentResult& whole = r.seg[kSegments];
  for (int s = 0; s < kSegments; ++s) {
    for (const auto& sv : served) r.seg[s].requests += sv[s];
    r.seg[s].sampled_requests = ex->sampled_requests[s];
    if (instrumented) score(ex->population[s], ex->sample[s], r.seg[s]);
    for (const auto& [fn, a] : ex->population[s]) all_pop[fn].add(a);
    for (const auto& [fn, a] : ex->sample[s]) all_sample[fn].add(a);
    whole.requests += r.seg[s].requests;
    whole.sampled_requests += r.seg[s].sampled_requests;
    whole.wall_s += r.seg[s].wall_s;
    whole.mean_rate +=
        r.seg[s].mean_rate / static_cast<double>(kSegments);  // segments of equal length
  }
  if (instrumented) score(all_pop, all_sample, whole);
  return r;
}

}  // namespace repstudy
