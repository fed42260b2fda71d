// `perfhat-lsp --check` over several files or a whole compile database (issue #25, the CI mode):
// the workspace index is built first (through the same store as the editor's), then every file
// is analysed with it and gets one summary line; exit status 3 when any regression warning is
// produced, and `--sarif FILE` writes the diagnostics as SARIF 2.1.0.
#pragma once

#include <string>
#include <vector>

#include "server/server/config.h"
#include "server/server/log.h"

namespace perfhat::server {

struct CheckManyArgs {
  std::vector<std::string> files;  // as given
  std::string compile_db;          // --compile-db: a directory or compile_commands.json
  std::string sarif;               // --sarif: output path ("" = none)
  std::string version;
};

// Exit status: 0 clean, 1 a file could not be read, 2 the feedback source failed, 3 a regression
// warning was produced.
int runCheckMany(const CheckManyArgs& args, const Config& cfg, const std::string& root,
                 Logger& log);

}  // namespace perfhat::server
