// What the engine's translation units share and nothing outside libperfhat's src/ needs:
// per-thread flags of the engine's own code, the exit flush, site symbol lookup, the clock's raw
// readings, the thread-local random source and environment parsing. engine.h is the Engine
// class; this is the glue between the files that implement it.
#pragma once

#include <cstdint>
#include <string>

#include "engine.h"

namespace perfhat::detail {

constexpr uint32_t kMaxSites = 1u << 16;  // slot array reserved per thread (virtual memory)
// CallRecords per thread. A thread wakes the background thread when half of its ring is
// waiting (aggregate_call), so the other half absorbs the time it takes to wake and drain. The
// ring is rewritten in a cycle, so its size decides where the lines an application thread writes
// come from: 1 MB per thread stays in the last-level cache of a service with a dozen or two
// threads, 2 MB per thread (the first size) did not. libperfhat's share of the sample service's
// CPU (perf, every call recorded, 3 runs each) was 8.7-8.9 % with 2 MB, 7.3-7.4 % with 1 MB,
// 6.6-8.1 % with 512 KB (bench/README.md, "Aggregate export"); 1 MB keeps twice the headroom for
// hot loops. A full ring drops records and counts them.
constexpr uint64_t kCallRing = uint64_t{1} << 15;

// Set while this thread is being torn down (registry.cc's ThreadGuard): no new thread state.
extern constinit thread_local bool t_exiting;

// Set while this thread runs the library's own code (the background thread always). A probe
// that fires there is ignored: with -finstrument-functions, inline functions the engine calls
// (a std::vector's, an exporter.hpp constructor) may be the instrumented copies of the user's
// translation units, and recording them would re-enter the engine under its own lock (the
// ASan/Debug build of the auto-instrumentation test deadlocked so, issue #19).
extern constinit thread_local bool t_in_engine;
struct EngineScope {
  bool prev = t_in_engine;
  EngineScope() { t_in_engine = true; }
  ~EngineScope() { t_in_engine = prev; }
  EngineScope(const EngineScope&) = delete;
  EngineScope& operator=(const EngineScope&) = delete;
};

// Lifecycle (engine.cc): a forked child neither records nor exports; the exit-time flush is
// registered again after each new kind of export result (register_exit_flush_after, engine.h).
extern std::atomic<bool> g_forked_child;

// Thread registry (registry.cc). The probes compare a thread's eh_uncaught against this
// address to know it must ask std::uncaught_exceptions() instead.
inline constexpr unsigned kAlwaysCheck = 1;
// A site's mangled symbol, looked up when it is first exported (off the probes' path).
void resolve(SiteInfo& si);

// A site's identity (name, function, mangled symbol, file, line) into an exported record: a
// span, an aggregate row or a SiteIdentity, which carry it under the same field names.
template <class Record>
void copy_site_identity(Record& out, const SiteInfo& si) {
  out.name = si.name;
  out.function = si.function;
  out.mangled = si.mangled;
  out.file = si.file;
  out.line = si.line;
}

// Clock and randomness (clock.cc).
uint64_t steady_now_ns();
uint64_t unix_now_ns();
uint64_t random64();

// Configuration from the environment (config.cc).
double parse_double_env(const char* name, double def);
std::string env_or(const char* name, const std::string& def);

}  // namespace perfhat::detail
