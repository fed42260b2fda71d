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
// it gained or lost; the others are walked. So are the implicit special members of a class whose
// text is unchanged (they follow from its declarations and those it sees).
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
  // must be walked. Called once per main-file definition, in the order of `events`.
  // What is taken or walked is lent to the unit, not copied (MainBodies::lent): `at` is where
  // the unit's functions will hold it (before the sort).
  bool take(CXCursor c, std::vector<FunctionInfo>& out, std::vector<ParseProblem>& problems,
            size_t at);
  // The definition at `c` was walked into `fns`, which go to the unit at `at`: `problems` from
  // `first` on are its walk's.
  void walked(CXCursor c, const std::vector<FunctionInfo>& fns,
              const std::vector<ParseProblem>& problems, size_t first, size_t at);
  // The implicit special members of the main-file class `cls` as the last build made them, moved
  // to where the class is now, appended to `out`; false when they must be made.
  bool takeImplicit(CXCursor cls, std::vector<FunctionInfo>& out);
  // They were made: `out` from `first` on.
  void madeImplicit(const std::vector<FunctionInfo>& out, size_t first);
  // Replaces the cache's content with this build's.
  void finish();
  // Whether what the last successful take() or takeImplicit() returned stands where the last
  // build had it (moved by no line): then it is that build's output unchanged (inference_reuse.h).
  bool lastTakeInPlace() const { return last_shift_ == 0; }

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
  // The last build's entry under `key` whose definition started at `start`'s column, moved to
  // `start` and from `from` into `to`; null when there is none.
  MainBodies::Walked* takeMoved(MainBodies::ByText& from, MainBodies::ByText& to, uint64_t key,
                                const Position& start);
  // `w`'s functions, `fns[0, n)`, go to the unit's functions [at, at + n) (MainBodies::lent).
  void lend(MainBodies::Walked* w, const FunctionInfo* fns, size_t at, size_t n);

  const TranslationUnit& tu_;
  MainBodies* cache_;
  CXFile main_file_ = nullptr;
  std::vector<Span> spans_;     // per main-file definition, in event order
  std::vector<uint64_t> keys_;  // their text keys
  size_t next_index_ = 0, current_ = 0;
  bool enabled_ = false;
  uint64_t skeleton_ = 0;
  std::set<uint64_t> directive_keys_;  // text keys of the bodies holding a directive
  MainBodies::ByText next_, next_implicit_;
  Span class_span_;  // of the class takeImplicit last looked at
  uint64_t class_key_ = 0;
  size_t reused_ = 0, walked_ = 0, implicit_reused_ = 0;
  int last_shift_ = 0;  // lines the last taken definition moved
  std::vector<MainBodies::Loan> lent_;
};

}  // namespace perfhat::analysis::ast_walk
