#include "server/analysis/ast_reuse.h"

#include <algorithm>
#include <iterator>
#include <numeric>
#include <set>
#include <string_view>

#include "common/fnv1a.h"

namespace perfhat::analysis::ast_walk {
namespace {

void mix(Fnv1a& h, std::string_view s) { h.text(s); }

void moveLines(Position& p, int d) { p.line += d; }
void moveLines(Range& r, int d) {
  moveLines(r.start, d);
  moveLines(r.end, d);
}

// Words in a signature that let other code depend on the body: constant evaluation and
// return type deduction.
bool othersMayDependOnBody(std::string_view signature) {
  for (std::string_view w : {"constexpr", "consteval", "auto", "decltype"})
    if (signature.find(w) != std::string_view::npos) return true;
  return false;
}

// Directives whose effect reaches past the body holding them: #define, #undef, #include,
// #import, #pragma (push_macro, pop_macro, ...), #line. (#if and its kin choose text of this body
// only.)
constexpr std::string_view kReachingDirectives[] = {"define", "undef",  "include",
                                                    "import", "pragma", "line"};

// A text test for such a directive in `body` (directiveTokens confirms it).
bool reachesBeyond(std::string_view body) {
  for (size_t at = body.find('#'); at != std::string_view::npos; at = body.find('#', at + 1)) {
    size_t line = body.rfind('\n', at);
    line = line == std::string_view::npos ? 0 : line + 1;
    if (body.substr(line, at - line).find_first_not_of(" \t") != std::string_view::npos)
      continue;  // not a directive: '#' in a comment, a literal, or a macro's stringizing
    size_t w = at + 1;
    while (w < body.size() && (body[w] == ' ' || body[w] == '\t')) ++w;
    std::string_view word = body.substr(w);
    for (std::string_view d : kReachingDirectives)
      if (word.substr(0, d.size()) == d) return true;
  }
  return false;
}

// Whether `loc`, expanded at `offset` of the main file, is spelled at that offset too.
// (libclang's spelling location of a macro body's token is its expansion: the caller tells
// those apart by the text.)
bool spelledAt(CXSourceLocation loc, CXFile file, unsigned offset) {
  CXFile f = nullptr;
  unsigned o = 0;
  clang_getSpellingLocation(loc, &f, nullptr, nullptr, &o);
  return f && clang_File_isEqual(f, file) && o == offset;
}

}  // namespace

MainReuse::MainReuse(const TranslationUnit& tu, MainBodies* cache, bool context_same,
                     const std::vector<Builder::Event>& events,
                     const std::vector<ParseProblem>& problems)
    : tu_(tu), cache_(cache) {
  if (!cache_) return;
  main_file_ = clang_getFile(tu.raw(), tu.path().c_str());
  for (const Builder::Event& ev : events) {
    if (ev.kind != Builder::Event::kMainFunction) continue;
    Span s = span(ev.cursor);
    spans_.push_back(s);
    keys_.push_back(s.in_main ? textKey(ev.cursor, s) : 0);
  }
  // The skeleton: the main file without its function bodies.
  std::vector<std::pair<unsigned, unsigned>> bodies;
  for (const Span& s : spans_)
    if (s.in_main && s.body_end > s.body_begin) bodies.emplace_back(s.body_begin, s.body_end);
  std::sort(bodies.begin(), bodies.end());
  std::string_view text = tu.contents();
  Fnv1a h;
  unsigned at = 0;
  for (const auto& [b, e] : bodies) {
    if (b >= at) {
      mix(h, text.substr(at, b - at));
      at = e;
    } else {
      at = std::max(at, e);
    }
  }
  mix(h, text.substr(std::min<size_t>(at, text.size())));
  skeleton_ = h.h;

  // A directive inside a body (#define, #undef, #include, #pragma, #line) reaches the code after
  // it, which the skeleton does not see. An unchanged body defines the same macros as last time;
  // a changed body that holds one now, or a body that held one and is gone, turns reuse off.
  std::set<uint64_t> now(keys_.begin(), keys_.end());
  enabled_ = cache_->valid && context_same && cache_->skeleton == skeleton_;
  for (size_t i = 0; i < spans_.size(); ++i) {
    const Span& s = spans_[i];
    const bool directive = s.in_main &&
                           reachesBeyond(text.substr(s.body_begin, s.body_end - s.body_begin)) &&
                           directiveTokens(s);
    if (directive) directive_keys_.insert(keys_[i]);
    if (directive && !cache_->by_text.count(keys_[i])) enabled_ = false;
  }
  for (uint64_t k : cache_->directive_keys)
    if (!now.count(k)) enabled_ = false;
  for (const ParseProblem& p : problems) enabled_ = enabled_ && !p.error;
  for (size_t i = 0; enabled_ && i < spans_.size(); ++i) {
    const Span& s = spans_[i];
    if (!s.in_main || cache_->by_text.count(keys_[i])) continue;
    if (othersMayDependOnBody(text.substr(s.begin, s.body_begin - s.begin))) enabled_ = false;
  }
}

// The text test above also matches a raw string literal's lines: libclang's tokens tell a
// directive ('#' first on its line, then the directive's name) from a literal.
// A location by offset (clang_getLocationForOffset) maps every macro argument of the file first,
// ~13 ms on googletest's gtest_unittest.cc at each reparse; a body written in the file has the
// same range from its cursor, which the lexer reads at the same offsets.
bool MainReuse::directiveTokens(const Span& s) const {
  // A brace at both ends, spelled where it is expanded: not a macro's argument (spelled
  // elsewhere) nor a macro's body (expanded at the macro's name, which is no brace).
  std::string_view text = tu_.contents();
  const bool in_file = !clang_Range_isNull(s.body_range) && s.body_end > s.body_begin &&
                       text[s.body_begin] == '{' && text[s.body_end - 1] == '}' &&
                       spelledAt(clang_getRangeStart(s.body_range), main_file_, s.body_begin) &&
                       spelledAt(clang_getRangeEnd(s.body_range), main_file_, s.body_end);
  CXSourceRange r =
      in_file ? s.body_range
              : clang_getRange(clang_getLocationForOffset(tu_.raw(), main_file_, s.body_begin),
                               clang_getLocationForOffset(tu_.raw(), main_file_, s.body_end));
  CXToken* toks = nullptr;
  unsigned n = 0;
  clang_tokenize(tu_.raw(), r, &toks, &n);
  bool found = false;
  unsigned prev_line = 0;
  for (unsigned i = 0; i < n && !found; ++i) {
    unsigned line = 0;
    clang_getSpellingLocation(clang_getTokenLocation(tu_.raw(), toks[i]), nullptr, &line, nullptr,
                              nullptr);
    const bool first_on_line = i == 0 || line != prev_line;
    prev_line = line;
    if (!first_on_line || i + 1 >= n || clang_getTokenKind(toks[i]) != CXToken_Punctuation ||
        toString(clang_getTokenSpelling(tu_.raw(), toks[i])) != "#")
      continue;
    const std::string name = toString(clang_getTokenSpelling(tu_.raw(), toks[i + 1]));
    for (std::string_view d : kReachingDirectives) found = found || name == d;
  }
  if (toks) clang_disposeTokens(tu_.raw(), toks, n);
  return found;
}

MainReuse::Span MainReuse::span(CXCursor c) const {
  Span s;
  CXSourceRange r = clang_getCursorExtent(c);
  CXFile f1 = nullptr, f2 = nullptr;
  clang_getExpansionLocation(clang_getRangeStart(r), &f1, nullptr, nullptr, &s.begin);
  clang_getExpansionLocation(clang_getRangeEnd(r), &f2, nullptr, nullptr, &s.end);
  s.in_main = f1 && f2 && main_file_ && clang_File_isEqual(f1, main_file_) &&
              clang_File_isEqual(f2, main_file_) && s.begin <= s.end &&
              s.end <= tu_.contents().size();
  if (!s.in_main) return s;
  s.start = toPosition(clang_getRangeStart(r));
  s.body_begin = s.body_end = s.end;
  CXCursor body = clang_getNullCursor();
  clang_visitChildren(
      c,
      [](CXCursor k, CXCursor, CXClientData d) {
        if (k.kind == CXCursor_CompoundStmt || k.kind == CXCursor_CXXTryStmt)
          *static_cast<CXCursor*>(d) = k;
        return CXChildVisit_Continue;
      },
      &body);
  if (!clang_Cursor_isNull(body)) {
    CXSourceRange br = clang_getCursorExtent(body);
    CXFile b1 = nullptr, b2 = nullptr;
    unsigned o1 = 0, o2 = 0;
    clang_getExpansionLocation(clang_getRangeStart(br), &b1, nullptr, nullptr, &o1);
    clang_getExpansionLocation(clang_getRangeEnd(br), &b2, nullptr, nullptr, &o2);
    if (b1 && b2 && clang_File_isEqual(b1, main_file_) && clang_File_isEqual(b2, main_file_) &&
        s.begin <= o1 && o1 <= o2 && o2 <= s.end) {
      s.body_begin = o1;
      s.body_end = o2;
      s.body_range = br;
    }
  }
  return s;
}

uint64_t MainReuse::textKey(CXCursor c, const Span& s) const {
  Fnv1a h;
  mix(h, std::to_string(c.kind));
  mix(h, toString(clang_getCursorSpelling(c)));
  // The USR tells apart definitions with the same text in different classes or namespaces
  // (two `bool empty() const { return items_.empty(); }`), which must not swap their results.
  mix(h, toString(clang_getCursorUSR(c)));
  mix(h, tu_.contents().substr(s.begin, s.end - s.begin));
  return h.h;
}

MainBodies::Walked* MainReuse::takeMoved(MainBodies::ByText& from, MainBodies::ByText& to,
                                         uint64_t key, const Position& start) {
  auto [first, last] = from.equal_range(key);
  for (auto it = first; it != last; ++it) {
    MainBodies::Walked& w = it->second;
    if (w.start.column != start.column) continue;
    const int d = start.line - w.start.line;
    last_shift_ = d;
    for (FunctionInfo& f : w.functions) {
      if (d == 0) break;
      moveLines(f.range, d);
      moveLines(f.name_range, d);
      for (Node& n : f.nodes) {
        moveLines(n.range, d);
        moveLines(n.hint, d);
      }
    }
    for (ParseProblem& p : w.problems) moveLines(p.range, d);
    w.start = start;
    auto taken = to.emplace(key, std::move(w));
    from.erase(it);
    return &taken->second;
  }
  return nullptr;
}

void MainReuse::lend(MainBodies::Walked* w, const FunctionInfo* fns, size_t at, size_t n) {
  MainBodies::Loan& loan = lent_.emplace_back();
  loan.entry = w;
  loan.at.resize(n);
  std::iota(loan.at.begin(), loan.at.end(), at);
  for (size_t i = 0; i < n; ++i) {
    loan.keys.push_back(fns[i].key);
    loan.unresolved.push_back(fns[i].unresolved_calls);
  }
}

bool MainReuse::take(CXCursor, std::vector<FunctionInfo>& out, std::vector<ParseProblem>& problems,
                     size_t at) {
  current_ = next_index_++;
  if (!enabled_ || current_ >= spans_.size() || !spans_[current_].in_main) return false;
  MainBodies::Walked* w =
      takeMoved(cache_->by_text, next_, keys_[current_], spans_[current_].start);
  if (!w) return false;
  out = std::move(w->functions);
  w->functions.clear();
  lend(w, out.data(), at, out.size());
  problems.insert(problems.end(), w->problems.begin(), w->problems.end());
  ++reused_;
  return true;
}

// A class's implicit members follow from its declarations and those it sees: the class's text,
// the skeleton and the headers, all the same while reuse is on.
bool MainReuse::takeImplicit(CXCursor cls, std::vector<FunctionInfo>& out) {
  class_key_ = 0;
  if (!cache_) return false;
  class_span_ = span(cls);
  if (!class_span_.in_main) return false;
  class_key_ = textKey(cls, class_span_);
  if (!enabled_) return false;
  MainBodies::Walked* w =
      takeMoved(cache_->implicit_by_text, next_implicit_, class_key_, class_span_.start);
  if (!w) return false;
  ++implicit_reused_;
  lend(w, w->functions.data(), out.size(), w->functions.size());
  out.insert(out.end(), std::make_move_iterator(w->functions.begin()),
             std::make_move_iterator(w->functions.end()));
  w->functions.clear();
  return true;
}

void MainReuse::madeImplicit(const std::vector<FunctionInfo>& out, size_t first) {
  if (!cache_ || !class_span_.in_main || class_key_ == 0) return;
  MainBodies::Walked w;
  w.start = class_span_.start;
  lend(&next_implicit_.emplace(class_key_, std::move(w))->second, out.data() + first, first,
       out.size() - first);
}

void MainReuse::walked(CXCursor, const std::vector<FunctionInfo>& fns,
                       const std::vector<ParseProblem>& problems, size_t first, size_t at) {
  ++walked_;
  if (!cache_ || current_ >= spans_.size() || !spans_[current_].in_main) return;
  MainBodies::Walked w;
  w.start = spans_[current_].start;
  w.problems.assign(problems.begin() + first, problems.end());
  lend(&next_.emplace(keys_[current_], std::move(w))->second, fns.data(), at, fns.size());
}

void MainReuse::finish() {
  if (!cache_) return;
  // Swapped, not move-assigned: the loans point into these entries, and a swap keeps them.
  cache_->by_text.swap(next_);
  cache_->implicit_by_text.swap(next_implicit_);
  next_ = {};
  next_implicit_ = {};
  cache_->lent = std::move(lent_);
  cache_->implicit_reused = implicit_reused_;
  cache_->skeleton = skeleton_;
  cache_->directive_keys = std::move(directive_keys_);
  cache_->valid = true;
  cache_->reused = reused_;
  cache_->walked = walked_;
}

}  // namespace perfhat::analysis::ast_walk
