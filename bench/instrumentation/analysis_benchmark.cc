// Off-hot-path costs of libperfhat: TigrisDSL parsing, one Tigris classification cycle over N
// functions, and the per-request adaptive sampling decision (Algorithm 1, taken under a mutex).
#include <benchmark/benchmark.h>

#include <random>

#include "adaptive_sampler.h"
#include "tigris.h"

namespace {

using namespace perfhat;

void BM_ParseRestrictedFilter(benchmark::State& st) {
  const char* f =
      "less changeable ∩ more frequent ∩ (more usage-pattern ∪ (more expensive ∩ less "
      "usage-pattern))";
  for ([[maybe_unused]] auto _ : st) benchmark::DoNotOptimize(tigris::parse(f));
}
BENCHMARK(BM_ParseRestrictedFilter);

void BM_ClassifyCycle(benchmark::State& st) {
  std::mt19937_64 rng(1);
  std::lognormal_distribution<double> ln(3, 1.5);
  std::vector<tigris::EventMetrics> ev(static_cast<size_t>(st.range(0)));
  for (size_t i = 0; i < ev.size(); ++i) {
    ev[i].name = "f" + std::to_string(i);
    for (auto m : {tigris::metric::kInvocationFrequency, tigris::metric::kExecutionTime,
                   tigris::metric::kComputationPattern, tigris::metric::kUserBehavior}) {
      ev[i].metrics[std::string(m)] = ln(rng);
    }
  }
  auto f = tigris::parse(
      "less changeable ∩ more frequent ∩ (more usage-pattern ∪ (more expensive ∩ less "
      "usage-pattern))");
  auto b = tigris::Bindings::defaults();
  for ([[maybe_unused]] auto _ : st) benchmark::DoNotOptimize(tigris::classify(*f.root, ev, b));
  st.SetItemsProcessed(st.iterations() * st.range(0));
}
BENCHMARK(BM_ClassifyCycle)->Arg(100)->Arg(1000)->Arg(10000);

void BM_AdaptiveDecide(benchmark::State& st) {
  sampling::AdaptiveSampler s;
  const char* types[] = {"/home", "/vets", "/pets", "/owners"};
  uint64_t x = 88172645463325252ull;
  int i = 0;
  for ([[maybe_unused]] auto _ : st) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    double u = static_cast<double>(x >> 11) * 0x1.0p-53;
    auto d = s.decide(types[i++ & 3], u, 1.0);
    s.on_response(types[i & 3], 1000, d.sampled, 1.0);
  }
}
BENCHMARK(BM_AdaptiveDecide);

}  // namespace
