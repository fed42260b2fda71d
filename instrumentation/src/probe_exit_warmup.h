// A call the collection budget takes out of a long skip run (one in a thousand at a rate of
// 0.001) is timed from the end of Probe::begin to the start of Probe::leave, and on its way there
// it finds the exit path cold: the thread state's exception and session words that ~Probe reads,
// and leave()'s own code, were last touched many calls ago. On the sample service those misses
// added a constant 150-250 ns to every sampled call's duration (small helpers' p50s read +300 %,
// bench/README.md). begin() asks for those lines just before it reads the start clock, so they
// arrive while the function body runs instead of inside the timed interval's end.
#pragma once

#include "engine.h"

namespace perfhat::detail {

// Probe::leave's code: a member function's address is not a pointer in C++, its symbol is.
extern "C" const char perfhat_probe_leave_code[] __asm__("_ZN7perfhat6detail5Probe5leaveEv");

inline void warm_exit_path(const Hot* h) noexcept {
  __builtin_prefetch(h->eh_uncaught);
  __builtin_prefetch(&h->session_hash);
  __builtin_prefetch(perfhat_probe_leave_code);
  __builtin_prefetch(perfhat_probe_leave_code + 64);
}

}  // namespace perfhat::detail
