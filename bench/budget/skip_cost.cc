// What one probed call costs on the collection budget's paths (issue #22), for callgrind's
// instruction counts (deterministic) and, without valgrind, a best-of-rounds time per call:
//   disabled   probes off (set_enabled(false)): the armed byte's load and branch only; also what a
//              site the budget disarms costs (probing mode's untraced classes)
//   counted    no budget, the request sampler records nothing: phase 1 counts the call (the
//              common path of a probe without a budget)
//   skipped    a budget keeps 1 call in 10^9 of the site: the call is inside a skip run (one
//              decrement, nothing else); runs are capped at budget::kMaxRun calls, so one call
//              in kMaxRun + 1 redraws (amortized in the figure)
//
//   budget_skip_cost ROW [calls=200000]
//   valgrind --tool=callgrind --toggle-collect='*monitored*' budget_skip_cost skipped 200000
// Instructions per call = Ir of monitored() / calls (bench/budget/skip_cost_test.sh).
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "budget_runtime.h"
#include "perfhat/exporter.hpp"
#include "perfhat/memory_exporter.hpp"
#include "perfhat/perfhat.hpp"

namespace {

[[gnu::noinline, gnu::noipa]] uint64_t monitored(uint64_t x) {
  PERFHAT_FUNCTION();
  asm volatile("" : "+r"(x));
  return x * 3 + 1;
}

double now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

// The fastest of a few rounds: the least disturbed by the other processes on the machine.
double ns_per_call(long calls) {
  double best = 1e30;
  uint64_t x = 1;
  for (int round = 0; round < 5; ++round) {
    const double t0 = now_ns();
    for (long i = 0; i < calls; ++i) x = monitored(x);
    best = std::min(best, (now_ns() - t0) / static_cast<double>(calls));
  }
  if (x == 0) std::puts("");  // keeps the calls
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s disabled|counted|skipped [calls]\n", argv[0]);
    return 2;
  }
  const char* row = argv[1];
  const long calls = argc > 2 ? std::atol(argv[2]) : 200000;
  perfhat::Config c;
  c.sampler = std::strcmp(row, "skipped") == 0 ? "full" : "none";
  c.export_interval_s = 3600;
  if (!perfhat::init(c, std::make_shared<perfhat::MemoryExporter>())) {
    std::fprintf(stderr, "init: %s\n", perfhat::last_error().c_str());
    return 1;
  }
  if (std::strcmp(row, "disabled") == 0) {
    perfhat::set_enabled(false);
  } else if (std::strcmp(row, "skipped") == 0) {
    // Every site id this process can have kept at 1 in 10^9: every run is a capped one
    // (budget::kMaxRun calls, then a fresh draw).
    monitored(1);
    perfhat::budget::publish(std::vector<double>(1024, 1e-9));
    monitored(1);
  } else if (std::strcmp(row, "counted") != 0) {
    std::fprintf(stderr, "unknown row '%s'\n", row);
    return 2;
  }
  monitored(1);  // registered before the measurement
  std::printf("%s: %.2f ns per call (best of 5 rounds of %ld)\n", row, ns_per_call(calls), calls);
  perfhat::budget::clear();
  perfhat::shutdown();
  return 0;
}
