// `perfhat-experiment overhead`: the IDE-overhead study of the paper (§VI), measured through the
// language server as an editor drives it: time from opening files until perfhat-lsp has
// published diagnostics for each of them, for
//   full    every file of a compile database           single  one file
//   cold    a freshly started server (and so a cold feedback cache: it lives in the process)
//   warm    the same server again (full: close and re-open every file; single: an edit)
// repeated N times. The paper's second dimension, a cold feedback cache in a warm IDE, has no
// counterpart here: perfhat-lsp has no command to drop its cache, so it is not measured.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace perfhat::experiment {

struct OverheadOptions {
  std::string name = "code base";
  std::string compile_commands;     // folder or compile_commands.json
  std::string file;                 // the single file (default: the first of the database)
  std::vector<std::string> server;  // perfhat-lsp and its arguments
  int repeat = 10;
  std::string out_dir = "overhead";
};

// Files of a compile database (absolute, existing, de-duplicated, in database order).
std::vector<std::string> compileDatabaseFiles(const std::string& path);

// {"name","files","repeat","seconds":{"full_cold":[…],"full_warm":[…],"single_cold":[…],
//  "single_warm":[…]},"summary":{scenario:{"median","q1","q3","min","max"}}}
nlohmann::json measureOverhead(const OverheadOptions& o, std::ostream& progress);

}  // namespace perfhat::experiment
