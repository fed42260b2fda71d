// CPU time of the calling thread, for the per-phase split an edit's analysis reports.
#pragma once

#include <time.h>

namespace perfhat::server {

inline double threadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

}  // namespace perfhat::server
