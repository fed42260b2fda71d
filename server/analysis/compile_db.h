// Compile flags for a file (DESIGN §6): compile_commands.json found by searching upward from the
// file (also in `build/` beside each ancestor, as clangd does) or at a configured directory/file.
// The exact entry wins; else a sibling entry's flags (same directory, same extension, then any
// entry); else fallback flags plus the file's directory as an include path, with `missing` set
// so the caller warns once. libclang's resource dir is always added so its builtin headers are
// found wherever the binary lives.
#pragma once

#include <string>
#include <vector>

namespace perfhat::analysis {

struct CompileCommand {
  std::vector<std::string> args;  // flags only: no compiler, no input file, no -c/-o
  std::string directory;          // working directory of the entry ("" for fallback)
  std::string database;           // path of the compile_commands.json used ("" if none)
  enum class Source { Exact, Sibling, Fallback } source = Source::Fallback;
  bool missing = true;  // no database covers this file: fallback flags used
  std::string error;    // why the database could not be used (malformed JSON, ...)
};

// Finds compile_commands.json for `file`: `configured` (a directory or the file itself) when not
// empty, else searching upward. Returns "" when none exists.
std::string findCompileDatabase(const std::string& file, const std::string& configured = "");

// Args for `file`. `fallback_flags` are used when no entry applies. Never throws: a malformed
// database yields the fallback with `error` set.
CompileCommand compileCommandFor(const std::string& file, const std::string& configured,
                                 const std::vector<std::string>& fallback_flags);

// Splits a shell command line (the "command" form of an entry): quotes and backslashes.
std::vector<std::string> splitCommandLine(const std::string& command);

}  // namespace perfhat::analysis
