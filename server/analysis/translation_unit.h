// A libclang translation unit of one document, parsed from in-memory contents (unsaved file)
// with a precompiled preamble so that edits reparse quickly (DESIGN §6).
//
// Threading: one TranslationUnit must not be used from two threads at once (libclang's
// CXTranslationUnit is not thread-safe), but different TranslationUnits may be parsed and read
// on different threads concurrently: each owns its own CXIndex.
#pragma once

#include <clang-c/Index.h>

#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "server/analysis/snapshot.h"

namespace perfhat::analysis {

class TranslationUnit {
 public:
  ~TranslationUnit();
  TranslationUnit(const TranslationUnit&) = delete;
  TranslationUnit& operator=(const TranslationUnit&) = delete;

  // Parses `path` with `contents` as its text (the file need not exist on disk) and `args`
  // (compiler flags without the input file). Fails (with the reason) only when libclang fails
  // outright; source errors are reported through problems(), not as failure.
  //
  // kEditor builds a precompiled preamble on the first parse so that reparse() after an edit is
  // fast; kOneShot skips it, which is cheaper for a unit that is parsed once and never edited
  // (bulk enumeration in perfhat-fetch).
  enum class Mode { kEditor, kOneShot };
  static Result<std::unique_ptr<TranslationUnit>> parse(const std::string& path,
                                                        std::string contents,
                                                        const std::vector<std::string>& args,
                                                        Mode mode = Mode::kEditor);

  // Reparses with new contents, reusing the preamble. Measured with libclang 14: the preamble
  // is only reused when the main file exists on disk (any contents); for a path that does not
  // exist (a new, never-saved buffer) every reparse costs a full parse. On failure libclang
  // invalidates the TU; this fails and the object must be re-created with parse().
  Result<void> reparse(std::string contents);

  CXTranslationUnit raw() const { return tu_; }
  const std::string& path() const { return path_; }
  const std::string& contents() const { return contents_; }
  const std::vector<std::string>& args() const { return args_; }
  // Diagnostics of the main file (errors and warnings; notes dropped), 0-based positions.
  std::vector<ParseProblem> problems() const;
  // Wall time of the last parse() or reparse(), in milliseconds.
  double lastParseMs() const { return last_parse_ms_; }
  int parseCount() const { return parse_count_; }

 private:
  TranslationUnit() = default;
  CXIndex index_ = nullptr;
  CXTranslationUnit tu_ = nullptr;
  std::string path_;
  std::string contents_;
  std::vector<std::string> args_;
  double last_parse_ms_ = 0;
  int parse_count_ = 0;
};

// 0-based line and byte column of a location, resolved to where the macro was expanded.
Position toPosition(CXSourceLocation loc);
Range toRange(CXSourceRange range);
// The file a location expands in (absolute path as libclang knows it), "" when none.
std::string expansionFile(CXSourceLocation loc);
std::string toString(CXString s);  // takes ownership and disposes

}  // namespace perfhat::analysis
