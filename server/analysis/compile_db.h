// Compile flags for a file (DESIGN §6): compile_commands.json found by searching upward from the
// file (also in `build/` beside each ancestor, as clangd does) or at a configured directory/file.
// The exact entry wins; else a sibling entry's flags (same directory, same extension, then any
// entry); else fallback flags plus the file's directory as an include path, with `missing` set
// so the caller warns once. libclang's resource dir is always added so its builtin headers are
// found wherever the binary lives.
//
// A database is parsed once and kept while its file is unchanged (size and modification time):
// the server asks for flags at every analysis and perfhat-fetch for every file of the database,
// and re-reading a large project's database each time made both quadratic.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
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

// A parsed compile_commands.json. Entries without a string "file" or without arguments are
// skipped; ill-typed optional fields ("directory", single arguments) are ignored.
class CompileDatabase {
 public:
  // Never throws: text that is not a JSON array gives an empty database with error() set.
  // `path` names the database in errors and in CompileCommand::database.
  static CompileDatabase parse(std::string_view json_text, std::string path);
  // Reads and parses the file at `path`; an unreadable file gives an empty database with error().
  static CompileDatabase load(const std::string& path);

  // The flags for `file` (an absolute or relative path) from this database: its exact entry, else
  // a sibling's; `missing` when the database has no entry at all. The resource dir is not added.
  CompileCommand commandFor(const std::string& file) const;

  // The files of the usable entries: absolute, normalized, sorted, each once.
  std::vector<std::string> files() const;

  size_t size() const { return entries_.size(); }
  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }

 private:
  struct Entry {
    std::string file;  // absolute, normalized
    std::string directory;
    std::vector<std::string> raw;  // the compiler command line as written
  };
  const Entry* siblingOf(const std::string& file_abs) const;

  std::string path_, error_;
  std::vector<Entry> entries_;
  std::unordered_map<std::string, size_t> exact_;           // file → first entry
  std::unordered_map<std::string, size_t> by_dir_and_ext_;  // "dir\0.ext" → first entry
  std::unordered_map<std::string, size_t> by_ext_;          // ".ext" → first entry
};

// The database at `path` (a compile_commands.json), parsed once and shared while the file is
// unchanged: re-read when its size or modification time changes, or while that time is too recent
// to tell a second write in the same clock tick apart (as git treats "racily clean" files).
// Thread-safe; never returns null.
std::shared_ptr<const CompileDatabase> cachedCompileDatabase(const std::string& path);

// Finds compile_commands.json for `file`: `configured` (a directory or the file itself) when not
// empty, else searching upward. Returns "" when none exists.
std::string findCompileDatabase(const std::string& file, const std::string& configured = "");

// Args for `file`. `fallback_flags` are used when no entry applies. Never throws: a malformed
// database yields the fallback with `error` set. The database comes from cachedCompileDatabase.
CompileCommand compileCommandFor(const std::string& file, const std::string& configured,
                                 const std::vector<std::string>& fallback_flags);

// Splits a shell command line (the "command" form of an entry): quotes and backslashes.
std::vector<std::string> splitCommandLine(const std::string& command);

}  // namespace perfhat::analysis
