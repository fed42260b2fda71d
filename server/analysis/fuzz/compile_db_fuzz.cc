// Fuzz target: compile_commands.json (outside input: whatever build system wrote it). Parsing and
// every kind of lookup must never throw or crash; a lookup either finds flags or says why not.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "server/analysis/compile_db.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using perfhat::analysis::CompileCommand;
  using perfhat::analysis::CompileDatabase;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  CompileDatabase db = CompileDatabase::parse(text, "/fuzz/compile_commands.json");
  // An exact entry, a sibling, a header borrowing flags, a relative path.
  for (const char* file : {"/fuzz/src/a.cc", "/fuzz/src/new.cc", "/fuzz/src/a.h", "a.cc"}) {
    CompileCommand c = db.commandFor(file);
    if (c.missing != (db.size() == 0)) std::abort();
    if (c.missing && c.error.empty()) std::abort();  // no flags and no reason
  }
  // The "command" form's shell splitting, on the raw bytes.
  (void)perfhat::analysis::splitCommandLine(std::string(text));
  return 0;
}
