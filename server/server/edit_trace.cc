#include "server/server/edit_trace.h"

#include <sys/resource.h>

#include <cstdlib>

#include <fmt/format.h>

#include "server/server/thread_cpu.h"

namespace perfhat::server {
namespace {

// The calling thread's CPU time, the part of it spent in the kernel, and its page faults that
// needed no I/O (memory the allocator gave back to the system and takes again).
struct Usage {
  double cpu_ms = 0, sys_ms = 0;
  long minor_faults = 0;
};

Usage usageNow() {
  rusage r{};
  getrusage(RUSAGE_THREAD, &r);
  auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return {threadCpuMs(), ms(r.ru_stime), r.ru_minflt};
}

struct ThreadTrace {
  bool on = false;
  double queued_ms = 0;
  std::chrono::steady_clock::time_point wall0, wall;
  Usage use0, use;
  double elsewhere_cpu_ms = 0;
  std::vector<EditTrace::Stage> stages;
  std::string notes;
};

ThreadTrace& current() {
  thread_local ThreadTrace t;
  return t;
}

double msBetween(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

bool EditTrace::enabled() {
  static const bool on = std::getenv("PERFHAT_EDIT_TRACE") != nullptr;
  return on;
}

void EditTrace::begin(double queued_ms) {
  if (!enabled()) return;
  ThreadTrace& t = current();
  t.on = true;
  t.queued_ms = queued_ms;
  t.stages.clear();
  t.notes.clear();
  t.wall0 = t.wall = std::chrono::steady_clock::now();
  t.use0 = t.use = usageNow();
  t.elsewhere_cpu_ms = 0;
}

void EditTrace::mark(const char* stage, double elsewhere_cpu_ms) {
  ThreadTrace& t = current();
  if (!t.on) return;
  const auto wall = std::chrono::steady_clock::now();
  const Usage use = usageNow();
  t.elsewhere_cpu_ms += elsewhere_cpu_ms;
  t.stages.push_back({stage, msBetween(t.wall, wall), use.cpu_ms - t.use.cpu_ms + elsewhere_cpu_ms,
                      use.sys_ms - t.use.sys_ms, use.minor_faults - t.use.minor_faults});
  t.wall = wall;
  t.use = use;
}

void EditTrace::note(const std::string& text) {
  ThreadTrace& t = current();
  if (t.on) t.notes += " " + text;
}

std::string EditTrace::end() {
  ThreadTrace& t = current();
  if (!t.on) return {};
  t.on = false;
  std::string out = fmt::format("queued {:.2f} |", t.queued_ms);
  for (const Stage& s : t.stages)
    out += fmt::format(" {} {:.2f}/{:.2f}/{:.1f}/{}", s.name, s.wall_ms, s.cpu_ms, s.sys_ms,
                       s.minor_faults);
  out += fmt::format(" | total {:.2f}/{:.2f}/{:.1f}/{}", msBetween(t.wall0, t.wall),
                     t.use.cpu_ms - t.use0.cpu_ms + t.elsewhere_cpu_ms,
                     t.use.sys_ms - t.use0.sys_ms, t.use.minor_faults - t.use0.minor_faults);
  if (!t.notes.empty()) out += " |" + t.notes;
  return out;
}

}  // namespace perfhat::server
