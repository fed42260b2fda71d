// Links libperfhat into a C program built with -finstrument-functions for the recorder-cost
// bench (recorder_cost.sh, WORKLOAD=indent): before main it starts the library as
// recorder_cost.cc does (full sampler, every function, an exporter that discards), in the mode
// RECORDER_MODE names (aggregates | spans | disabled), and at exit it flushes and appends
// "calls C" (calls recorded) to the file RECORDER_CALLS_FILE when that is set.
// Compiled without -finstrument-functions: it is not part of what is measured.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <perfhat/exporter.hpp>
#include <perfhat/perfhat.hpp>

namespace {

class Discard final : public perfhat::Exporter {
 public:
  perfhat::ExportResult export_batch(const perfhat::ExportBatch&) override {
    return perfhat::ExportResult::kSuccess;
  }
};

uint64_t g_before = 0;

void finish() {
  perfhat::flush();
  const uint64_t calls = perfhat::counters().spans_recorded - g_before;
  perfhat::shutdown();
  if (const char* f = std::getenv("RECORDER_CALLS_FILE")) {
    if (FILE* out = std::fopen(f, "a")) {
      std::fprintf(out, "calls %llu\n", static_cast<unsigned long long>(calls));
      std::fclose(out);
    }
  }
}

// After autoinstrument's hook registration (priority 101), before the program's main.
[[gnu::constructor(102)]] void start() {
  const char* mode = std::getenv("RECORDER_MODE");
  const std::string m = mode ? mode : "aggregates";
  perfhat::Config c;
  c.sampler = "full";
  c.scope = "";
  c.enabled = m != "disabled";
  c.export_mode = m == "spans" ? "spans" : "aggregates";
  if (!perfhat::init(c, std::make_shared<Discard>())) {
    std::fprintf(stderr, "perfhat init: %s\n", perfhat::last_error().c_str());
    std::exit(1);
  }
  g_before = perfhat::counters().spans_recorded;
  std::atexit(finish);
}

}  // namespace
