// A known nested workload for overhead compensation tests: a parent calling tiny instrumented
// children, timed beside the same code uninstrumented, call by call interleaved (same load, same
// caches). What libperfhat reported for a parent call is read from its site's
// phase-1 sums on this thread, which move by exactly that call's (compensated) duration when the
// call was timed. Used by autoinstrument_test.cc (-finstrument-functions) and the XRay test's
// program; the harness itself is never instrumented.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine.h"
#include "hook_stack.h"

// XRay's attribute is Clang's; GCC (which builds the -finstrument-functions tests) warns on it.
#if defined(__clang__)
#define PERFHAT_TEST_NOINSTR __attribute__((no_instrument_function, xray_never_instrument))
#else
#define PERFHAT_TEST_NOINSTR __attribute__((no_instrument_function))
#endif

namespace perfhat::testing {

struct NestedTimings {
  double plain_median = 0;     // ticks, the code uninstrumented
  double reported_median = 0;  // ticks, what libperfhat reported for the instrumented parent
  size_t reported_calls = 0;
};

PERFHAT_TEST_NOINSTR inline double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

struct AlwaysInstrumented {
  PERFHAT_TEST_NOINSTR void operator()(bool) const {}
};

// Runs `reps` calls of each, alternating which goes first. `parent_fn` is the instrumented
// parent's entry address (its probe site). Probes must be initialized. `instrument(on)` is called
// before each call, outside the timed region: where instrumentation can be switched off at run
// time (XRay), `plain` is the same function as `instrumented` and the switch removes its probes,
// so both sides run the same code at the same addresses.
template <typename Instrumented, typename Plain, typename Switch = AlwaysInstrumented>
PERFHAT_TEST_NOINSTR NestedTimings time_nested(void* parent_fn, Instrumented instrumented,
                                               Plain plain, int reps,
                                               Switch instrument = Switch{}) {
  std::vector<double> plain_ticks, reported;
  detail::Site* site = autoinstrument::site_for(parent_fn);
  volatile unsigned sink = 0;
  for (int i = 0; i < reps; ++i) {
    for (int j = 0; j < 2; ++j) {
      const bool plain_turn = ((i + j) & 1) == 0;
      instrument(!plain_turn);
      if (plain_turn) {
        const uint64_t a = detail::now_ticks();
        sink = sink + static_cast<unsigned>(plain());
        plain_ticks.push_back(static_cast<double>(detail::now_ticks() - a));
        continue;
      }
      const detail::Hot* h = detail::t_hot;
      const uint32_t id = site->id.load();
      detail::Slot* slot = h != nullptr && id != 0 && id < h->capacity ? &h->slots[id] : nullptr;
      const uint64_t timed = slot != nullptr ? slot->timed.load() : 0;
      const uint64_t sum = slot != nullptr ? slot->sum_ticks.load() : 0;
      sink = sink + static_cast<unsigned>(instrumented());
      if (slot == nullptr) {  // the first call registers the site
        continue;
      }
      if (slot->timed.load() == timed + 1) {
        reported.push_back(static_cast<double>(slot->sum_ticks.load() - sum));
      }
    }
  }
  return {median_of(plain_ticks), median_of(reported), reported.size()};
}

}  // namespace perfhat::testing
