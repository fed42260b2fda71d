// Which of the main file's definitions a build takes from the last build of the same document
// instead of walking them again (MainBodies, ast_builder.h; issue #25, "edits that feel instant").
//
// Reuse is all or nothing per build, decided before any definition is built: it is on when the
// headers are the same (context_same), the main file has no parse error, its text outside
// function bodies (the skeleton: declarations, signatures, macros, classes) hashes as last time,
// no definition whose text changed is one other code may depend on (constexpr or consteval,
// deduced return type, decltype in its signature), and no changed body holds, now or before, a
// directive whose effect reaches the code after it (#define, #undef, #include, #pragma, #line).
// Then a definition whose text is unchanged is taken, its positions moved by the lines text above
// it gained or lost; the others are walked.
#pragma once

#include <set>
#include <unordered_map>
#include <vector>

#include "server/analysis/ast_walker.h"

namespace perfhat::analysis::ast_walk {

class MainReuse {
 public:
  MainReuse(const TranslationUnit& tu, MainBodies* cache, bool context_same,
            const std::vector<Builder::Event>& events, const std::vector<ParseProblem>& problems);
  // The definition at `c` as the last build walked it, moved to where it is now; false when it
  // must be walked.
  // Called once per main-file definition, in the order of `events`.
  bool take(CXCursor c, std::vector<FunctionInfo>& out, std::vector<ParseProblem>& problems);
  // The definition at `c` was walked: `problems` from `first` on are its walk's.
  void walked(CXCursor c, const std::vector<FunctionInfo>& fns,
              const std::vector<ParseProblem>& problems, size_t first);
  // Replaces the cache's content with this build's.
  void finish();

 private:
  // Where a definition's text is in the main file (byte offsets), its body's, and its start.
  struct Span {
    unsigned begin = 0, end = 0, body_begin = 0, body_end = 0;
    Position start;
    bool in_main = false;
    CXSourceRange body_range = clang_getNullRange();  // the body's extent, as libclang has it
  };
  Span span(CXCursor c) const;
  bool directiveTokens(const Span& s) const;
  uint64_t textKey(CXCursor c, const Span& s) const;

  const TranslationUnit& tu_;
  MainBodies* cache_;
  CXFile main_file_ = nullptr;
  std::vector<Span> spans_;     // per main-file definition, in event order
  std::vector<uint64_t> keys_;  // their text keys
  size_t next_index_ = 0, current_ = 0;
  bool enabled_ = false;
  uint64_t skeleton_ = 0;
  std::set<uint64_t> directive_keys_;  // text keys of the bodies holding a directive
  std::unordered_multimap<uint64_t, MainBodies::Walked> next_;
  size_t reused_ = 0, walked_ = 0;
};

}  // namespace perfhat::analysis::ast_walk
