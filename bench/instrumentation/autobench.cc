// A call-heavy program for the cost of automatic instrumentation (issue #18): an in-memory
// key-value store in the style of a storage library's memtable (a templated skip list with a
// comparator object, an arena, a hash, small accessors), built three ways by CMake:
//   instr_autobench_plain  no instrumentation at all (the baseline)
//   instr_autobench_auto   perfhat_autoinstrument() (compiler hooks + libperfhat)
// Both run the same work; see bench/autobench.sh for the configurations and bench/README.md
// ("Automatic instrumentation") for the figures.
//
//   instr_autobench throughput [ops=2000000]   prints ops/s of a fixed mix of Put/Get/Scan
//   instr_autobench latency [reps=20000]       prints, for Db::get/put/scan and checksum, the
//       median and mean of the harness's own timing of each call (clock cost subtracted); the
//       instrumented build adds an uninstrumented copy of the same functions timed call by call
//       in the same run (autobench_plain_copy.h), and what libperfhat reported for each call
//       it timed (phase 1, compensated unless PERFHAT_COMPENSATE=0).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include <x86intrin.h>

#ifdef AUTOBENCH_INSTRUMENTED
#include "perfhat/memory_exporter.hpp"
#include "perfhat/perfhat.hpp"
// Internal, for the calibration figures only (bench/CMakeLists.txt adds instrumentation/src).
#include "autobench_plain_copy.h"
#include "hook_stack.h"
#endif

#define AUTOBENCH_KV kv
#include "autobench_kv.inc"
#undef AUTOBENCH_KV

namespace {

// Process CPU time (every thread, libperfhat's background thread included): on a shared machine
// it moves far less than wall time when other processes take the cores.
double cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

uint64_t ticks_now() { return __rdtsc(); }

template <typename F>
void* code_address(F f) {
  void* p;  // a function pointer, or the Itanium ABI's non-virtual member pointer's first word
  std::memcpy(&p, &f, sizeof p);
  return p;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

// One timed function: the harness's time of each call (instrumented build: probes included),
// the uninstrumented copy's, and what libperfhat reported for each call it timed (the site's
// phase-1 sums on this thread move by that call's own, compensated, duration).
class Series {
 public:
  Series(const char* name, [[maybe_unused]] void* fn) : name_(name) {
#ifdef AUTOBENCH_INSTRUMENTED
    site_ = perfhat::autoinstrument::site_for(fn);
#endif
  }
  template <typename F>
  uint64_t run(F&& f) {
    begin_reported();
    const double a = now_s();
    const auto r = f();
    const double b = now_s();
    end_reported();
    harness_.push_back(b - a);
    return static_cast<uint64_t>(r);
  }
  template <typename F>
  uint64_t plain(F&& f) {
    const double a = now_s();
    const auto r = f();
    const double b = now_s();
    plain_.push_back(b - a);
    return static_cast<uint64_t>(r);
  }
  void print(double clock_ns, double ns_per_tick) const {
    auto ns = [&](const std::vector<double>& v, bool med) {
      return (med ? median(v) : mean(v)) * 1e9 - clock_ns;
    };
    std::printf("latency %s harness median %.1f mean %.1f ns", name_, ns(harness_, true),
                ns(harness_, false));
    if (!plain_.empty()) {
      std::printf(" | uninstrumented median %.1f mean %.1f ns", ns(plain_, true),
                  ns(plain_, false));
    }
    if (!reported_.empty()) {
      std::printf(" | reported median %.1f mean %.1f ns (%zu timed)",
                  median(reported_) * ns_per_tick, mean(reported_) * ns_per_tick, reported_.size());
    }
    std::printf(" (clock %.1f ns subtracted)\n", clock_ns);
  }

 private:
#ifdef AUTOBENCH_INSTRUMENTED
  perfhat::detail::Slot* slot() const {
    const perfhat::detail::Hot* h = perfhat::detail::t_hot;
    const uint32_t id = site_->id.load();
    return h != nullptr && id != 0 && id < h->capacity ? &h->slots[id] : nullptr;
  }
  void begin_reported() {
    if (const auto* s = slot()) timed0_ = s->timed.load(), sum0_ = s->sum_ticks.load();
  }
  void end_reported() {
    const auto* s = slot();
    if (s != nullptr && s->timed.load() == timed0_ + 1) {
      reported_.push_back(static_cast<double>(s->sum_ticks.load() - sum0_));
    }
  }
  perfhat::detail::Site* site_;
  uint64_t timed0_ = 0, sum0_ = 0;
#else
  void begin_reported() {}
  void end_reported() {}
#endif
  const char* name_;
  std::vector<double> harness_, plain_, reported_;  // seconds, seconds, ticks
};

// The fixed mix: 1 put, 8 gets, 1 scan of 16 per 10 operations, 1 checksum per 100.
uint64_t run_mix(kv::Db& db, uint64_t ops, const std::vector<char>& block) {
  uint64_t acc = 0;
  for (uint64_t i = 0; i < ops; ++i) {
    uint64_t r = i % 10;
    if (r == 0) {
      db.put(kv::key_of(i + 50000), "value");
    } else if (r == 9) {
      acc += db.scan(kv::key_of(i), 16);
    } else {
      acc += db.get(kv::key_of(i * 7)) ? 1 : 0;
    }
    if (i % 100 == 0) acc += kv::checksum(block);
  }
  return acc;
}

void fill(kv::Db& db, int n) {
  for (int i = 0; i < n; ++i) db.put(kv::key_of(i), "value");
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "throughput";
  const std::vector<char> block(4096, 'x');
#ifdef AUTOBENCH_INSTRUMENTED
  auto exporter = std::make_shared<perfhat::MemoryExporter>();
  perfhat::Config cfg = perfhat::Config::from_env();
  cfg.endpoint.clear();
  if (!perfhat::init(cfg, exporter))
    std::fprintf(stderr, "init: %s\n", perfhat::last_error().c_str());
#endif
  kv::Db db;
  fill(db, 50000);
  if (mode == "throughput") {
    uint64_t ops = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 2000000;
    run_mix(db, ops / 20, block);  // warm-up (and, with a filter, the first Tigris cycle)
#ifdef AUTOBENCH_INSTRUMENTED
    if (!cfg.filter.empty()) perfhat::analyze_now();
#endif
    double t0 = now_s(), c0 = cpu_s();
    uint64_t acc = run_mix(db, ops, block);
    double dt = now_s() - t0, dc = cpu_s() - c0;
    std::printf("throughput %.0f ops/s wall (%.3f s), %.0f ops per CPU-second (%.3f s), acc %llu\n",
                static_cast<double>(ops) / dt, dt, static_cast<double>(ops) / dc, dc,
                static_cast<unsigned long long>(acc));
#ifdef AUTOBENCH_INSTRUMENTED
    auto c = perfhat::counters();
    std::printf("relevant functions %llu, spans recorded %llu\n",
                static_cast<unsigned long long>(c.relevant_functions),
                static_cast<unsigned long long>(c.spans_recorded));
#endif
    return 0;
  }
  // latency: each function's calls timed by the harness with the clock (clock cost subtracted).
  // The instrumented build also runs an uninstrumented copy of the same functions, call by call
  // interleaved with the instrumented ones (same load, same caches), and reads what libperfhat
  // reported for each timed call.
  run_mix(db, 20000, block);  // warm-up, and with a filter the first Tigris cycle, as above
#ifdef AUTOBENCH_INSTRUMENTED
  if (!cfg.filter.empty()) perfhat::analyze_now();
  plain_copy::Db* copy = plain_copy::make_db();
  for (int i = 0; i < 50000; ++i) plain_copy::put(copy, kv::key_of(i), "value");
  // The warm-up's puts (run_mix: one in ten operations).
  for (uint64_t i = 0; i < 20000; i += 10) plain_copy::put(copy, kv::key_of(i + 50000), "value");
#endif
  const int reps = argc > 2 ? std::atoi(argv[2]) : 20000;
  Series get("get", code_address(&kv::Db::get)), put("put", code_address(&kv::Db::put)),
      scan("scan", code_address(&kv::Db::scan)), sum("checksum", code_address(&kv::checksum));
  // Called through a pointer: clang inlines a direct call of checksum into this loop, and an
  // inlined call has no XRay sled (docs/auto-instrumentation.md, "Limits"). The function and
  // its work are the same; the uninstrumented copy is a call into another file.
  uint32_t (*volatile checksum_fn)(const std::vector<char>&) = &kv::checksum;
  double floor = 0;
  uint64_t acc = 0;
  const double wall0 = now_s();
  const uint64_t tick0 = ticks_now();
  for (int i = 0; i < reps; ++i) {
    const std::string k = kv::key_of(static_cast<uint64_t>(i) * 7), from = kv::key_of(i);
    const std::string fresh = kv::key_of(static_cast<uint64_t>(i) + 70000);
    // Alternate which copy runs first, so neither always finds the other's cache misses.
    for (int copy_first = 0; copy_first < 2; ++copy_first) {
      const bool instrumented = (copy_first ^ (i & 1)) != 0;
#ifdef AUTOBENCH_INSTRUMENTED
      if (!instrumented) {
        acc += get.plain([&] { return plain_copy::get(copy, k); });
        acc += put.plain([&] {
          plain_copy::put(copy, fresh, "value");
          return 0;
        });
        acc += scan.plain([&] { return plain_copy::scan(copy, from, 64); });
        acc += sum.plain([&] { return plain_copy::checksum(block); });
        continue;
      }
#else
      if (!instrumented) continue;
#endif
      acc += get.run([&] { return db.get(k); });
      acc += put.run([&] {
        db.put(fresh, "value");
        return 0;
      });
      acc += scan.run([&] { return db.scan(from, 64); });
      acc += sum.run([&] { return checksum_fn(block); });
    }
    const double e = now_s();
    floor += now_s() - e;
  }
  const double ns_per_tick = (now_s() - wall0) * 1e9 / static_cast<double>(ticks_now() - tick0);
  const double clock_ns = floor / reps * 1e9;
  std::printf("acc %llu\n", static_cast<unsigned long long>(acc));
  for (Series* f : {&get, &put, &scan, &sum}) f->print(clock_ns, ns_per_tick);
#ifdef AUTOBENCH_INSTRUMENTED
  if (const auto* c = perfhat::autoinstrument::probe_costs()) {
    const auto* ts = perfhat::autoinstrument::thread_stack();
    std::printf("probe cost per call (ticks): calibrated / added in context:");
    for (int k = 0; k < perfhat::autoinstrument::kProbeKinds; ++k) {
      static const char* const kKinds[] = {"skipped", "counted", "clocked", "recorded"};
      std::printf(" %s %.1f / %.1f", kKinds[k], c->pair[k] / 256.0, ts->extra[k] / 256.0);
    }
    std::printf("; self clocked %.1f recorded %.1f\n", c->self[2] / 256.0, c->self[3] / 256.0);
  }
#endif
  return 0;
}
