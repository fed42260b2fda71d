// The reliability suite's shared pieces (issue #19): its mode, the figures it records and the
// handler's memory.
//
// Mode (environment, so that CTest's per-case runs and scripts/reliability.sh share one binary):
//   PERFHAT_RELIABILITY_MODE=short|long   short (default): CI, seconds per case; long: soak
//   PERFHAT_RELIABILITY_SECONDS=N         long mode: seconds of load per load/soak case (120)
//   PERFHAT_RELIABILITY_RESULTS=FILE      append every figure and test outcome to FILE as JSON
//                                         lines (read by reliability_report, which writes the table
//                                         of docs/reliability.md); unset: nothing is written
// Tests assert behaviour only (nothing lost, documented status codes, still healthy); every
// latency and memory figure is recorded, never asserted.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace perfhat::reliability {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

inline bool longMode() {
  const char* m = std::getenv("PERFHAT_RELIABILITY_MODE");
  return m && std::string(m) == "long";
}

// Seconds of load for load and soak cases: a few in short mode, the configured soak otherwise.
inline double loadSeconds(double short_seconds) {
  if (!longMode()) return short_seconds;
  const char* s = std::getenv("PERFHAT_RELIABILITY_SECONDS");
  double v = s ? std::atof(s) : 0;
  return v > 0 ? std::min(v, 3600.0) : 120.0;
}

// How many times a fault is injected: `short_count` in short mode, more in long mode (bounded).
inline int faultRounds(int short_count, int long_count) {
  return longMode() ? long_count : short_count;
}

// Appends one JSON record (one line) to $PERFHAT_RELIABILITY_RESULTS. One write(2) per line on an
// O_APPEND descriptor: parallel test processes do not interleave lines.
inline void record(json fields) {
  const char* path = std::getenv("PERFHAT_RELIABILITY_RESULTS");
  if (!path || !*path) return;
  if (!fields.contains("test")) {
    if (const auto* info = ::testing::UnitTest::GetInstance()->current_test_info()) {
      fields["test"] = std::string(info->test_suite_name()) + "." + info->name();
    }
  }
  fields["mode"] = longMode() ? "long" : "short";
  std::string line = fields.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  ssize_t n = ::write(fd, line.data(), line.size());
  (void)n;
  ::close(fd);
}

// Resident memory of a process, from /proc: current (VmRSS) and peak (VmHWM), in kB.
struct Memory {
  long rss_kb = -1;
  long peak_kb = -1;
};
inline Memory processMemory(pid_t pid) {
  Memory m;
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) m.rss_kb = std::atol(line.c_str() + 6);
    if (line.rfind("VmHWM:", 0) == 0) m.peak_kb = std::atol(line.c_str() + 6);
  }
  return m;
}

// Latency samples in milliseconds, with the lower-rank quantile.
class Latencies {
 public:
  void add(double ms) {
    std::lock_guard lock(mu_);
    v_.push_back(ms);
  }
  size_t count() const {
    std::lock_guard lock(mu_);
    return v_.size();
  }
  double quantile(double q) const {
    std::lock_guard lock(mu_);
    if (v_.empty()) return -1;
    std::vector<double> s = v_;
    std::sort(s.begin(), s.end());
    return s[static_cast<size_t>(q * static_cast<double>(s.size() - 1))];
  }
  double max() const { return quantile(1.0); }

 private:
  mutable std::mutex mu_;
  std::vector<double> v_;  // GUARDED_BY(mu_)
};

inline double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace perfhat::reliability
