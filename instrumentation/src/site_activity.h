// One probe site as the collection budget sees it: who it is and its phase-1 totals so far.
#pragma once

#include <cstdint>
#include <string>

namespace perfhat::detail {

struct SiteActivity {
  uint32_t id = 0;
  std::string name, function, mangled;
  int kind = 0;                // SiteKind
  const void* addr = nullptr;  // inside the function (symbolised for the stack samples)
  uint64_t count = 0, timed = 0, sum_ticks = 0;
  // Of `count`, the calls on live threads that have run a request root: the calls a request's
  // worth of other work can leave cold (budget_cost_account.h coldEntries); a thread that never
  // serves requests (a background loop) calls its sites warm.
  uint64_t on_request_threads = 0;
};

}  // namespace perfhat::detail
