// Fuzz target: the intake log's reader (feedback-handler/ingest/intake_log.h), which reads back a
// file after a crash, damage included. Any bytes must read without crashing, and the records that
// come back must have strictly increasing ids (each acknowledged request replays once).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "feedback-handler/ingest/intake_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/perfhat-intake-fuzz-" + std::to_string(::getpid());
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  const auto records = perfhat::handler::IntakeLog::peek(path, 0);
  for (size_t i = 1; i < records.size(); ++i) {
    if (records[i].id <= records[i - 1].id) __builtin_trap();
  }
  ::unlink(path.c_str());
  return 0;
}
