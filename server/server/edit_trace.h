// Where one build's time goes, stage by stage, on the worker thread: wall time, thread CPU time,
// the kernel's part of it and minor page faults between marks, logged as one line per build
// ("edit trace ...: queued Q | stage wall/cpu/sys/faults ... | total ..."; bench/index reads it).
// Off unless the environment sets PERFHAT_EDIT_TRACE (then a mark costs a clock read and a
// getrusage).
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace perfhat::server {

class EditTrace {
 public:
  // Whether PERFHAT_EDIT_TRACE was set when the process first asked.
  static bool enabled();
  // Starts this thread's trace of one build; `queued_ms` is how long the edit waited for the
  // worker (debounce and other work) before it began.
  static void begin(double queued_ms);
  // Closes the stage that ended now (since the previous mark or begin()); `elsewhere_cpu_ms` is
  // CPU time the stage spent on another thread this one waited for (the parse thread), added
  // to its CPU (its kernel time and faults are this thread's only).
  static void mark(const char* stage, double elsewhere_cpu_ms = 0);
  // Adds `text` to this thread's trace line, after its stages (what a stage did, not its cost).
  static void note(const std::string& text);
  // This thread's stages as "queued Q | stage wall/cpu/sys/faults ... | total ...", and clears
  // them; empty when no trace was begun.
  static std::string end();

  struct Stage {
    const char* name;
    double wall_ms;
    double cpu_ms;
    double sys_ms;
    long minor_faults;
  };
};

}  // namespace perfhat::server
