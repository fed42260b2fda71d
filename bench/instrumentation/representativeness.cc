// Representativeness study in the style of thesis Table 5.3: the same in-process service under a
// stationary, a seasonal and a bursty closed-loop workload, monitored with each sampler
// (adaptive, uniform, inverse at a desired rate of 50 %, full, none). Reported: throughput
// (requests/s), the average share of requests sampled, and the RMSE over functions of the
// per-function mean of a quantity the samplers never look at (the result size, our stand-in
// for the thesis' memory consumption) between the exported sample and the population of the
// same run (every call, from the phase-1 aggregates).
//
// Usage: instr_representativeness [seconds per run = 8]
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "perfhat/exporter.hpp"
#include "perfhat/perfhat.hpp"

namespace {

constexpr int kTypes = 6;
constexpr int kMaxWorkers = 6;
constexpr const char* kRequestNames[kTypes] = {"GET /home", "GET /vets", "GET /pets",
                                               "GET /owners", "POST /visit", "GET /search"};

void spin_us(double us) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(us);
  while (std::chrono::steady_clock::now() < end) {
  }
}

template <int T>
[[gnu::noinline]] void query(std::mt19937_64& rng) {
  PERFHAT_FUNCTION();
  std::lognormal_distribution<double> d(2.0 + 0.3 * T, 0.8);
  double size = std::floor(d(rng));
  spin_us(50 + 2.5 * size);
  PERFHAT_RESULT_SIZE(size);
}

template <int T>
[[gnu::noinline]] void render(std::mt19937_64& rng) {
  PERFHAT_FUNCTION();
  std::exponential_distribution<double> e(1.0 / (10 + 5 * T));
  double size = std::floor(e(rng));
  spin_us(50 + 5 * size);
  PERFHAT_RESULT_SIZE(size);
}

template <int T>
[[gnu::noinline]] void handle(std::mt19937_64& rng) {
  PERFHAT_REQUEST(kRequestNames[T]);
  query<T>(rng);
  render<T>(rng);
}

using Handler = void (*)(std::mt19937_64&);
const Handler kHandlers[kTypes] = {handle<0>, handle<1>, handle<2>, handle<3>, handle<4>, handle<5>};
// Navigation mix: home-heavy, search rare.
const double kMix[kTypes] = {0.40, 0.20, 0.15, 0.12, 0.10, 0.03};

// Per-function sample means of the result size, from the exported spans.
class SampleExporter final : public perfhat::Exporter {
 public:
  perfhat::ExportResult export_batch(const perfhat::ExportBatch& b) override {
    std::lock_guard<std::mutex> l(mu);
    for (const auto& s : b.spans) {
      if (s.is_request) ++sampled_requests;
      if (s.result_size < 0) continue;
      auto& e = by_fn[s.function];
      e.first += static_cast<double>(s.result_size);
      e.second += 1;
    }
    for (const auto& a : b.aggregates) {
      if (a.name != a.function) requests += a.count;  // request roots carry their own name
      auto& t = truth[a.function];
      t.first += a.result_size_sum;
      t.second += static_cast<double>(a.result_size_n);
    }
    return perfhat::ExportResult::kSuccess;
  }
  std::mutex mu;
  std::map<std::string, std::pair<double, double>> by_fn;
  // Population (every call, from the phase-1 aggregates) of the same run.
  std::map<std::string, std::pair<double, double>> truth;
  uint64_t sampled_requests = 0, requests = 0;
};

enum class Pattern { kStationary, kSeasonal, kBurst };
const char* name(Pattern p) {
  return p == Pattern::kStationary ? "stationary" : p == Pattern::kSeasonal ? "seasonal" : "burst";
}
// Active closed-loop users at time t (s).
int users(Pattern p, double t) {
  switch (p) {
    case Pattern::kStationary: return 2;
    case Pattern::kSeasonal: return 1 + static_cast<int>(std::lround(2.5 + 2.5 * std::sin(t)));
    case Pattern::kBurst: return std::fmod(t, 4.0) < 1.0 ? kMaxWorkers : 2;
  }
  return 2;
}

struct Result {
  double throughput = 0, rate = 0, rmse = NAN;
  size_t functions = 0;
};

Result run(Pattern p, const std::string& sampler, double seconds) {
  auto ex = std::make_shared<SampleExporter>();
  perfhat::Config c;
  c.sampler = sampler;
  c.sampling_rate = 0.5;
  c.export_interval_s = 0.5;
  c.span_ring_per_thread = 1 << 15;
  if (!perfhat::init(c, ex)) std::abort();
  std::atomic<bool> stop{false};
  std::atomic<int> target{1};
  std::atomic<uint64_t> done{0};
  std::vector<std::thread> ws;
  for (int w = 0; w < kMaxWorkers; ++w) {
    ws.emplace_back([&, w] {
      std::mt19937_64 rng(1234 + w);
      std::discrete_distribution<int> mix(std::begin(kMix), std::end(kMix));
      while (!stop.load(std::memory_order_relaxed)) {
        if (w >= target.load(std::memory_order_relaxed)) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          continue;
        }
        kHandlers[mix(rng)](rng);
        done.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  auto t0 = std::chrono::steady_clock::now();
  double t = 0;
  while (t < seconds) {
    target.store(users(p, t));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  stop = true;
  for (auto& w : ws) w.join();
  perfhat::shutdown();
  Result r;
  r.throughput = static_cast<double>(done.load()) / t;
  std::lock_guard<std::mutex> l(ex->mu);
  r.rate = ex->requests ? static_cast<double>(ex->sampled_requests) / ex->requests : 0;
  // RMSE over functions of (sample mean - population mean); a function with calls but no
  // sampled span counts with the population mean as its error (it is missing from the sample).
  double ss = 0;
  int n = 0;
  for (const auto& [fn, t] : ex->truth) {
    if (t.second == 0) continue;
    double pop = t.first / t.second;
    auto it = ex->by_fn.find(fn);
    double err = it == ex->by_fn.end() ? pop : it->second.first / it->second.second - pop;
    ss += err * err;
    ++n;
  }
  r.rmse = n ? std::sqrt(ss / n) : NAN;
  r.functions = ex->by_fn.size();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 8;
  std::printf("Representativeness study: %.0f s per run, desired rate 50%%, %d request types\n",
              seconds, kTypes);
  std::printf("| workload | sampler | throughput req/s | sampled requests | RMSE (result size) | functions seen |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (Pattern p : {Pattern::kStationary, Pattern::kSeasonal, Pattern::kBurst}) {
    for (const char* s : {"full", "adaptive", "uniform", "inverse"}) {
      Result r = run(p, s, seconds);
      std::printf("| %s | %s | %.0f | %.1f %% | %.3f | %zu |\n", name(p), s, r.throughput,
                  100 * r.rate, r.rmse, r.functions);
    }
    Result none = run(p, "none", seconds);
    std::printf("| %s | none | %.0f | 0 %% | — | 0 |\n", name(p), none.throughput);
    std::fflush(stdout);
  }
  return 0;
}
