// perfhat-fetch: warm the local feedback store for a whole project (DESIGN §1, §12).
// Enumerates every function of the project with libclang through the analysis library (the
// same AST builder and key builder as perfhat-lsp, so keys match), fetches their feedback in
// bulk batchGet calls, and — with --store — pulls the handler's sketches into the local
// handler's SQLite store (the same exact, cursor-based pull the local handler does).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace perfhat::fetch {

struct FetchOptions {
  std::string handler;  // http://host:port
  std::string token;
  std::string compile_commands;  // directory holding compile_commands.json, or the file
  std::string store;             // local handler's SQLite store ("" = report only)
  bool dry_run = false;          // enumerate only; no network
  size_t batch_keys = 2000;      // keys per batchGet call
  size_t jobs = 0;               // parallel parsers; 0 = one per hardware thread
};

struct FetchSummary {
  size_t files = 0;
  size_t files_failed = 0;
  size_t functions = 0;  // distinct function definitions found
  size_t keys = 0;       // distinct keys requested (functions + callees)
  size_t matched = 0;    // keys the handler knows
  size_t with_data = 0;  // of those, with latency stats in the window
  uint64_t bytes = 0;    // response bytes received
  uint64_t rows_stored = 0;
  double seconds = 0;            // whole run, wall clock
  double parse_seconds = 0;      // enumeration (parsing) phase, wall clock
  double parse_cpu_seconds = 0;  // CPU time of the enumeration phase, all threads
  std::vector<std::string> errors;
};

// Progress callback: (done, total, what). Called from the parsing threads, serialized.
using Progress = std::function<void(size_t, size_t, const std::string&)>;

// Files listed in a compile database (deduplicated, absolute). Throws std::runtime_error when
// the database is missing or malformed.
std::vector<std::string> projectFiles(const std::string& compile_commands);

// One parser per hardware thread.
size_t defaultJobs();

// Runs the whole fetch. Throws std::runtime_error on fatal errors (no database, handler down).
FetchSummary run(const FetchOptions& options, const Progress& progress);

}  // namespace perfhat::fetch
