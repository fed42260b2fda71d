// Recorder cost of libperfhat's entry/exit path (issue #24, seed 001 BM-001-OVH): a call-heavy
// real workload (nlohmann::json parsing and printing a generated document, every template
// function of the library instantiated here) built twice, plain and with -finstrument-functions
// + perfhat::autoinstrument, every call recorded (full sampler) into the aggregate export or the
// span ring, exported to an exporter that discards (recording, not the network, is measured).
//
//   instr_recorder_cost_plain [reps=40]
//   instr_recorder_cost_auto  [reps=40] [aggregates|spans|disabled]
//
// Prints "seconds S calls C" (C: calls recorded; 0 for the plain build). bench/README.md's
// "Recorder cost" section has the method and the figures; bench/instrumentation/recorder_cost.sh
// runs both builds alternately.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#ifdef RECORDER_AUTO
#include <perfhat/exporter.hpp>
#include <perfhat/perfhat.hpp>

namespace {
class Discard final : public perfhat::Exporter {
 public:
  perfhat::ExportResult export_batch(const perfhat::ExportBatch&) override {
    return perfhat::ExportResult::kSuccess;
  }
};
}  // namespace
#endif

namespace {

std::string document(int items) {
  nlohmann::json doc = nlohmann::json::array();
  for (int i = 0; i < items; ++i) {
    doc.push_back({{"id", i},
                   {"name", "item-" + std::to_string(i)},
                   {"price", i * 1.25},
                   {"tags", {"a", "b", std::to_string(i % 7)}},
                   {"nested", {{"x", i % 3 == 0}, {"y", nullptr}}}});
  }
  return doc.dump();
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 40;
#ifdef RECORDER_AUTO
  perfhat::Config c;
  c.sampler = "full";
  c.scope = "";
  c.enabled = !(argc > 2 && std::strcmp(argv[2], "disabled") == 0);
  c.export_mode = argc > 2 && std::strcmp(argv[2], "spans") == 0 ? "spans" : "aggregates";
  if (!perfhat::init(c, std::make_shared<Discard>())) {
    std::fprintf(stderr, "init: %s\n", perfhat::last_error().c_str());
    return 1;
  }
  const uint64_t before = perfhat::counters().spans_recorded;
#endif
  const std::string text = document(2000);
  const auto t0 = std::chrono::steady_clock::now();
  size_t sink = 0;
  for (int r = 0; r < reps; ++r) {
    const nlohmann::json parsed = nlohmann::json::parse(text);
    sink += parsed.dump().size();
  }
#ifdef RECORDER_AUTO
  perfhat::flush();
#endif
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  uint64_t calls = 0;
#ifdef RECORDER_AUTO
  calls = perfhat::counters().spans_recorded - before;
  perfhat::shutdown();
#endif
  std::printf("seconds %.6f calls %llu sink %zu\n", s, static_cast<unsigned long long>(calls),
              sink);
  return 0;
}
