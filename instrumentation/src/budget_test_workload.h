// The hot/cold workload of the collection-budget tests (instr_budget_test's BudgetEngine and the
// integration test BudgetPublish): a hot function of ~1.5 µs called 100 times for each call of a
// cold one of ~20 µs, both probed. The budget's class rules name the namespace, so each test
// expands it into a namespace of its own: PERFHAT_BUDGET_TEST_WORKLOAD(budgettest) defines
// budgettest::hot::tick() and budgettest::cold::step().
#pragma once

#include <time.h>

#include "perfhat/perfhat.hpp"

// Busy for `ns` nanoseconds of wall time (the probes time the call, not the CPU).
#define PERFHAT_BUDGET_TEST_WORKLOAD(NS)                                    \
  namespace NS {                                                            \
  inline double spin_ns(double ns) {                                        \
    timespec t0{}, t{};                                                     \
    clock_gettime(CLOCK_MONOTONIC, &t0);                                    \
    volatile double x = 0;                                                  \
    do {                                                                    \
      for (int i = 0; i < 20; ++i) x = x + 1;                               \
      clock_gettime(CLOCK_MONOTONIC, &t);                                   \
    } while ((t.tv_sec - t0.tv_sec) * 1e9 + (t.tv_nsec - t0.tv_nsec) < ns); \
    return x;                                                               \
  }                                                                         \
  namespace hot {                                                           \
  [[gnu::noinline]] void tick() {                                           \
    PERFHAT_FUNCTION();                                                     \
    spin_ns(1500);                                                          \
  }                                                                         \
  }                                                                         \
  namespace cold {                                                          \
  [[gnu::noinline]] void step() {                                           \
    PERFHAT_FUNCTION();                                                     \
    spin_ns(20000);                                                         \
  }                                                                         \
  }                                                                         \
  }
