// A short-lived instrumented program for the exit and burst tests (instr_exit_test): a burst of
// probed calls (outer() calls hot() ten times), then an exit chosen by the arguments. Built twice:
// with the probe macros, and with -finstrument-functions + perfhat::autoinstrument
// (PERFHAT_BURST_AUTO, no macros). It never calls perfhat::shutdown() unless asked to.
//
//   burst_app OUTER [--shutdown] [--sleep-ms N] [--exit-from-thread] [--static-dtor-probes]
//             [--fork-child] [--print-maps] [--print-maps-at-start] [--print-counters]
//             [--print-runpath]
//
// With --fork-child, after the burst a child is forked (the background exporter then runs in
// the parent only, and may hold the library's locks), makes probed calls and exits normally; the
// parent waits for it at most 20 s and exits with 3 when it hung.
//
// --print-maps exports what the burst recorded (perfhat::flush(), synchronous), then prints
// "mapped <file>" for each shared object of the OTLP transport that is mapped (its module,
// cpp-httplib, OpenSSL, Brotli, zlib), read from /proc/self/maps. --print-maps-at-start prints
// the same as "at start mapped <file>" after one probed call (which turns probes on) and before
// the burst, with nothing exported yet unless the export interval has passed.
// --print-counters (macro build) prints perfhat::counters() after --shutdown.
// --print-runpath prints "runpath" if the program was linked with a RUNPATH or RPATH entry.
//
// With --sleep-ms, the burst runs again after the sleep. Prints "calls hot=H outer=O" (the
// true counts) before exiting.
#include <link.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#ifndef PERFHAT_BURST_AUTO
#include <perfhat/perfhat.hpp>
#define BURST_PROBE() PERFHAT_FUNCTION()
#else
namespace perfhat {
void shutdown();
void flush();
}  // namespace perfhat
#define BURST_PROBE() ((void)0)
#endif

namespace burst {

volatile long g_sink = 0;
long g_hot_calls = 0, g_outer_calls = 0;

[[gnu::noinline]] void hot(int i) {
  BURST_PROBE();
  ++g_hot_calls;
  g_sink = g_sink + i;
}

[[gnu::noinline]] void outer(int i) {
  BURST_PROBE();
  ++g_outer_calls;
  for (int k = 0; k < 10; ++k) hot(i + k);
}

// A static whose destructor makes probed calls, constructed before the first probe (so it is
// destroyed after the library's exit handler has run) and after it.
struct ProbesInDestructor {
  const char* tag;
  ~ProbesInDestructor() {
    if (enabled) {
      for (int i = 0; i < 100; ++i) outer(i);
    }
  }
  bool enabled = false;
};
ProbesInDestructor g_early{"early"};

// The OTLP transport's shared objects this process has mapped.
void print_maps(const char* prefix) {
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> seen;
  for (std::string line; std::getline(maps, line);) {
    const size_t slash = line.rfind('/');
    if (slash == std::string::npos) continue;
    const std::string file = line.substr(slash + 1);
    for (const char* lib :
         {"libperfhat_otlp_http", "libcpp-httplib", "libssl", "libcrypto", "libbrotli", "libz."}) {
      if (file.rfind(lib, 0) == 0) seen.insert(file);
    }
  }
  for (const auto& f : seen) std::printf("%smapped %s\n", prefix, f.c_str());
}

}  // namespace burst

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: burst_app OUTER [options]\n");
    return 2;
  }
  const long outer_calls = std::strtol(argv[1], nullptr, 10);
  bool do_shutdown = false, exit_from_thread = false, dtor_probes = false, fork_child = false;
  bool print_maps = false, print_maps_at_start = false, print_counters = false;
  bool print_runpath = false;
  long sleep_ms = 0;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--shutdown") do_shutdown = true;
    if (a == "--exit-from-thread") exit_from_thread = true;
    if (a == "--static-dtor-probes") dtor_probes = true;
    if (a == "--fork-child") fork_child = true;
    if (a == "--print-maps") print_maps = true;
    if (a == "--print-maps-at-start") print_maps_at_start = true;
    if (a == "--print-counters") print_counters = true;
    if (a == "--print-runpath") print_runpath = true;
    if (a == "--sleep-ms" && i + 1 < argc) sleep_ms = std::strtol(argv[++i], nullptr, 10);
  }
  for (const ElfW(Dyn)* d = _DYNAMIC; print_runpath && d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_RUNPATH || d->d_tag == DT_RPATH) std::printf("runpath\n");
  }
  burst::g_early.enabled = dtor_probes;
  static burst::ProbesInDestructor late{"late"};
  late.enabled = dtor_probes;
  if (print_maps_at_start) {
    burst::outer(0);
    burst::print_maps("at start ");
  }
  for (long i = 0; i < outer_calls; ++i) burst::outer(static_cast<int>(i));
  // Leave time for a background export (the case of issue #18: one export, then exit).
  if (sleep_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    for (long i = 0; i < outer_calls; ++i)
      burst::outer(static_cast<int>(i));  // for the final flush
  }
  std::printf("calls hot=%ld outer=%ld\n", burst::g_hot_calls, burst::g_outer_calls);
  if (print_maps) {
    perfhat::flush();
    burst::print_maps("");
  }
  std::fflush(stdout);
  if (fork_child) {
    const pid_t child = fork();
    if (child == 0) {
      for (long i = 0; i < outer_calls; ++i) burst::outer(static_cast<int>(i));
      std::exit(0);  // atexit handlers and static destructors run, as in a test's death child
    }
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (waitpid(child, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
        std::fprintf(stderr, "burst_app: the forked child hung at exit\n");
        return 3;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "burst_app: the forked child failed (status %d)\n", status);
      return 4;
    }
  }
  if (do_shutdown) perfhat::shutdown();
#ifndef PERFHAT_BURST_AUTO
  if (print_counters) {
    const perfhat::Counters c = perfhat::counters();
    std::printf("recorded=%llu exported=%llu dropped_export=%llu\n",
                static_cast<unsigned long long>(c.spans_recorded),
                static_cast<unsigned long long>(c.spans_exported),
                static_cast<unsigned long long>(c.spans_dropped_export));
    std::fflush(stdout);
  }
#else
  (void)print_counters;
#endif
  if (exit_from_thread) {
    std::thread([] {
      burst::outer(1);
      std::exit(0);
    }).join();
  }
  return 0;
}
