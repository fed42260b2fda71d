// `perfhat-experiment overhead`: the IDE-overhead study of the paper (§VI), measured through the
// language server as an editor drives it: time from opening files until perfhat-lsp has
// published diagnostics for each of them, for
//   full    every file of a compile database           single  one file
//   cold    a freshly started server (and so a cold feedback cache: it lives in the process)
//   warm    the same server again (full: close and re-open every file; single: an edit)
// each with and without perfhat-lsp's feedback cache (the paper's "with or without cache": the
// server started with PERFHAT_CACHE_MAX_ENTRIES=0 keeps nothing, so every lookup goes to the
// source), repeated N times.
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
  int repeat = 10;            // single-file repetitions (and full-project ones unless full_repeat)
  int full_repeat = -1;       // full-project repetitions; < 0: as `repeat`
  bool with_no_cache = true;  // also measure every scenario without the feedback cache
  std::string out_dir = "overhead";
};

// Files of a compile database (absolute, existing, de-duplicated, in database order).
std::vector<std::string> compileDatabaseFiles(const std::string& path);

// Scenario names: {full,single}_{cold,warm} with the cache, the same with a `_nocache` suffix.
std::vector<std::string> overheadScenarios(bool with_no_cache);

// {"name","files","repeat","full_repeat","seconds":{"full_cold":[…],"full_warm":[…],…,
//  "single_warm_nocache":[…]},"summary":{scenario:{"median","q1","q3","min","max"}}}
nlohmann::json measureOverhead(const OverheadOptions& o, std::ostream& progress);

}  // namespace perfhat::experiment
