// The AST walk at a loop: the loop node, its `// perfhat: iterations=N` annotation, and trip
// counts known before run time (constant bounds, fixed-size ranges, range-for producers).
#include "server/analysis/ast_walker.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <regex>

#include "server/analysis/annotation.h"

namespace perfhat::analysis::ast_walk {

namespace {

// Parses the numeric literal of a token; nullopt when it is not one.
std::optional<double> numberToken(const std::string& t) {
  std::string s;
  for (char ch : t)
    if (ch != '\'') s.push_back(ch);
  while (!s.empty() && (s.back() == 'u' || s.back() == 'U' || s.back() == 'l' || s.back() == 'L'))
    s.pop_back();
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return std::nullopt;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 0);
  if (!end || *end) return std::nullopt;
  return static_cast<double>(v);
}

// Trip count of `for (T i = A; i OP B; STEP)` with literal A and B; nullopt otherwise. A start
// or bound that is not a single literal (a named constant, `constexpr`, an enumerator,
// `sizeof(a) / sizeof(a[0])`, `std::size(a)`) is taken from `init_value` / `bound_value`, the
// values libclang evaluated for those expressions, when it could.
std::optional<double> constantTripCount(const std::vector<std::string>& toks,
                                        std::optional<double> init_value = std::nullopt,
                                        std::optional<double> bound_value = std::nullopt) {
  // toks: `for ( ... ; ... ; ... )` possibly followed by the body's first token.
  size_t s1 = std::string::npos, s2 = std::string::npos, close = std::string::npos;
  int depth = 0;
  for (size_t i = 0; i < toks.size(); ++i) {
    if (toks[i] == "(")
      ++depth;
    else if (toks[i] == ")" && --depth == 0) {
      close = i;
      break;
    } else if (toks[i] == ";" && depth == 1) {
      (s1 == std::string::npos ? s1 : s2) = i;
    }
  }
  if (s1 == std::string::npos || s2 == std::string::npos || close == std::string::npos)
    return std::nullopt;
  std::vector<std::string> init(toks.begin() + 2, toks.begin() + s1);
  std::vector<std::string> cond(toks.begin() + s1 + 1, toks.begin() + s2);
  std::vector<std::string> inc(toks.begin() + s2 + 1, toks.begin() + close);
  std::string var;
  std::optional<double> a;
  if (init.size() >= 3 && init[init.size() - 2] == "=") {
    var = init[init.size() - 3];
    a = numberToken(init.back());
  } else if (init.size() >= 4 && init.back() == "}" && init[init.size() - 3] == "{") {
    var = init[init.size() - 4];
    a = numberToken(init[init.size() - 2]);
  } else {
    // `i = kFirst`, `int i = N - 1`: the variable is the token before the first `=` or `{`.
    for (size_t i = 1; i < init.size(); ++i)
      if (init[i] == "=" || init[i] == "{") {
        var = init[i - 1];
        break;
      }
  }
  if (!a) a = init_value;
  if (!a || cond.size() < 3 || cond[0] != var) return std::nullopt;
  auto b = cond.size() == 3 ? numberToken(cond[2]) : std::nullopt;
  if (!b) b = bound_value;
  if (!b) return std::nullopt;
  double step = 0;
  if (inc.size() == 2 && ((inc[0] == "++" && inc[1] == var) || (inc[1] == "++" && inc[0] == var)))
    step = 1;
  else if (inc.size() == 2 &&
           ((inc[0] == "--" && inc[1] == var) || (inc[1] == "--" && inc[0] == var)))
    step = -1;
  else if (inc.size() == 3 && inc[0] == var && (inc[1] == "+=" || inc[1] == "-=")) {
    auto k = numberToken(inc[2]);
    if (!k || *k == 0) return std::nullopt;
    step = inc[1] == "+=" ? *k : -*k;
  } else {
    return std::nullopt;
  }
  const std::string& op = cond[1];
  double span = 0;
  if (step > 0 && (op == "<" || op == "!="))
    span = *b - *a;
  else if (step > 0 && op == "<=")
    span = *b - *a + 1;
  else if (step < 0 && (op == ">" || op == "!="))
    span = *a - *b;
  else if (step < 0 && op == ">=")
    span = *a - *b + 1;
  else
    return std::nullopt;
  double n = std::ceil(span / std::abs(step));
  return n > 0 ? n : 0;
}

// True for a constant-false loop condition. Inside a macro expansion the tokens of the extent
// are the macro call's, not the `0`, so the condition is also evaluated by libclang.
bool isZeroLiteral(CXCursor c, const std::vector<std::string>& toks) {
  if (toks.size() == 1 && (toks[0] == "0" || toks[0] == "false")) return true;
  CXEvalResult r = clang_Cursor_Evaluate(c);
  if (!r) return false;
  bool zero = clang_EvalResult_getKind(r) == CXEval_Int && clang_EvalResult_getAsLongLong(r) == 0;
  clang_EvalResult_dispose(r);
  return zero;
}

// The integer value libclang evaluates `e` to (constant expressions only), or nullopt.
std::optional<long long> evaluateInt(CXCursor e) {
  CXEvalResult r = clang_Cursor_Evaluate(e);
  if (!r) return std::nullopt;
  std::optional<long long> v;
  if (clang_EvalResult_getKind(r) == CXEval_Int) {
    v = clang_EvalResult_isUnsignedInt(r)
            ? static_cast<long long>(std::min<unsigned long long>(
                  clang_EvalResult_getAsUnsigned(r), std::numeric_limits<long long>::max()))
            : clang_EvalResult_getAsLongLong(r);
  }
  clang_EvalResult_dispose(r);
  return v;
}

// Elements of a C array or std::array type, from the type itself.
std::optional<long long> fixedArraySize(CXType t) {
  t = clang_getCanonicalType(t);
  if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference)
    t = clang_getCanonicalType(clang_getPointeeType(t));
  if (t.kind == CXType_ConstantArray) {
    const long long n = clang_getArraySize(t);
    if (n >= 0) return n;
  }
  // std::array<T, N>: the size is the last template argument of the canonical spelling.
  const std::string spelled = toString(clang_getTypeSpelling(t));
  static const std::regex kStdArray(R"(^(const )?std::(__1::)?array<.*, (\d+)(UL|ul|u|U)?>$)");
  std::smatch m;
  if (spelled.size() < 512 && std::regex_match(spelled, m, kStdArray)) {
    return std::strtoll(m[3].str().c_str(), nullptr, 10);
  }
  return std::nullopt;
}

// The first call (pre-order) under `c` that references a function, or a null cursor.
// libclang's visit is iterative: a range-for over a 35,000-term expression is no deeper here.
CXCursor firstCall(CXCursor c) {
  auto isCall = [](CXCursor k) {
    if (k.kind != CXCursor_CallExpr) return false;
    CXCursor ref = clang_getCursorReferenced(k);
    return !clang_Cursor_isNull(ref) &&
           (ref.kind == CXCursor_FunctionDecl || ref.kind == CXCursor_CXXMethod);
  };
  if (isCall(c)) return c;
  CXCursor found = clang_getNullCursor();
  std::pair<CXCursor*, decltype(isCall)*> data{&found, &isCall};
  clang_visitChildren(
      c,
      [](CXCursor k, CXCursor, CXClientData d) {
        auto* state = static_cast<std::pair<CXCursor*, decltype(isCall)*>*>(d);
        if ((*state->second)(k)) {
          *state->first = k;
          return CXChildVisit_Break;
        }
        return CXChildVisit_Recurse;
      },
      &data);
  return found;
}

}  // namespace

CXCursor Builder::firstCallUnder(CXCursor c) { return firstCall(c); }

// Offset of the first `;` at paren depth 1 in a for header: children before it are the init.
Position Builder::firstSemicolon(CXCursor loop, CXCursor body) {
  CXSourceRange header = clang_getRange(clang_getRangeStart(clang_getCursorExtent(loop)),
                                        clang_getRangeStart(clang_getCursorExtent(body)));
  CXToken* toks = nullptr;
  unsigned n = 0;
  clang_tokenize(tu_.raw(), header, &toks, &n);
  Position pos{1 << 30, 0};
  int depth = 0;
  for (unsigned i = 0; i < n; ++i) {
    std::string s = toString(clang_getTokenSpelling(tu_.raw(), toks[i]));
    if (s == "(")
      ++depth;
    else if (s == ")")
      --depth;
    else if (s == ";" && depth == 1) {
      pos = toPosition(clang_getTokenLocation(tu_.raw(), toks[i]));
      break;
    }
  }
  if (toks) clang_disposeTokens(tu_.raw(), toks, n);
  return pos;
}

void Builder::walkLoop(CXCursor c, FnCtx& ctx, int parent, int arm,
                       std::vector<FunctionInfo>& lambdas) {
  std::vector<CXCursor> kids = children(c);
  if (kids.empty()) return;
  CXCursor body = c.kind == CXCursor_DoStmt ? kids.front() : kids.back();
  if (c.kind == CXCursor_DoStmt && !options_.show_do_while_zero && kids.size() == 2 &&
      isZeroLiteral(kids.back(), tokens(clang_getCursorExtent(kids.back())))) {
    walkChildren(c, ctx, parent, arm, lambdas);  // `do { … } while (0)`: a macro idiom
    return;
  }
  Node n;
  n.kind = NodeKind::Loop;
  n.loop.kind = c.kind == CXCursor_ForStmt           ? LoopKind::For
                : c.kind == CXCursor_CXXForRangeStmt ? LoopKind::RangeFor
                : c.kind == CXCursor_WhileStmt       ? LoopKind::While
                                                     : LoopKind::Do;
  n.range = toRange(clang_getCursorExtent(c));
  n.hint = c.kind == CXCursor_DoStmt ? n.range.end
                                     : toPosition(clang_getRangeStart(clang_getCursorExtent(body)));
  // A loop in an algorithm's lambda is the lambda's loop in production's records.
  n.loop.ordinal = ctx.in_algorithm_lambda ? -1 : ctx.loop_counter++;
  int line = n.range.start.line;
  // On the loop's line, or alone on the line above (not another statement's comment).
  std::optional<IterationsAnnotation> a;
  if (line < static_cast<int>(lines_.size())) a = parseIterationsAnnotation(lines_[line]);
  if (!a && line > 0 && line - 1 < static_cast<int>(lines_.size())) {
    a = parseIterationsAnnotation(lines_[line - 1]);
    if (a && !a->alone) a.reset();
  }
  if (a) n.loop.annotated_iterations = a->iterations;
  if (c.kind == CXCursor_ForStmt) {
    CXSourceRange header = clang_getRange(clang_getRangeStart(clang_getCursorExtent(c)),
                                          clang_getRangeStart(clang_getCursorExtent(body)));
    n.loop.constant_trip = constantTripCount(tokens(header));
    if (!n.loop.constant_trip) evaluatedTripCount(kids, body, header, n);
  }
  if (c.kind == CXCursor_CXXForRangeStmt) {
    for (size_t i = 0; i + 1 < kids.size(); ++i) {
      // The loop variable (a structured binding too: its initializer dereferences an iterator).
      if (clang_isDeclaration(kids[i].kind)) continue;
      CXCursor producer = firstCall(kids[i]);
      // A range over a local variable: the collection it was initialized from is the producer
      // (`auto stories = repo.stories(id); for (auto& s : stories)`); a variable filled by the
      // function itself is bounded by its insertions (inference, DataFlow).
      if (std::string var = localVar(kids[i]); clang_Cursor_isNull(producer) && !var.empty()) {
        n.loop.range_var = var;
        n.loop.range_var_name = spelling(stripConversions(kids[i]));
        producer = firstCall(clang_getCursorReferenced(stripConversions(kids[i])));
      }
      if (!clang_Cursor_isNull(producer)) {
        const CalleeInfo& info = callee(clang_getCursorReferenced(producer));
        n.loop.producer_key = info.key;
        n.loop.producer_mangled = info.mangled;
        break;
      }
      // A range over an array of a size fixed by its type: `int a[8]`, `std::array<T, 8>`.
      if (std::optional<long long> size = fixedArraySize(clang_getCursorType(kids[i]))) {
        n.loop.constant_trip = static_cast<double>(*size);
        n.loop.constant_trip_source.array = TripCountSource::FixedArray{
            toString(clang_getTypeSpelling(clang_getCursorType(kids[i]))), *size};
        break;
      }
    }
  }
  int id = addNode(ctx, std::move(n), parent, arm);
  Position init_end = c.kind == CXCursor_ForStmt ? firstSemicolon(c, body) : Position{-1, 0};
  for (size_t i = 0; i < kids.size(); ++i) {
    bool is_body = clang_equalCursors(kids[i], body);
    int child_arm = 0;
    if (!is_body) {
      if (c.kind == CXCursor_CXXForRangeStmt) child_arm = -1;
      if (c.kind == CXCursor_ForStmt &&
          toPosition(clang_getRangeStart(clang_getCursorExtent(kids[i]))) < init_end)
        child_arm = -1;
    }
    walk(kids[i], ctx, id, child_arm, lambdas);
  }
}

// `for (int i = 0; i < kCount; ++i)` with a bound (or start) that is a constant expression
// but not a literal: libclang evaluates it, and the source is kept for the hover.
void Builder::evaluatedTripCount(const std::vector<CXCursor>& kids, CXCursor body,
                                 CXSourceRange header, Node& n) {
  std::optional<TripCountSource::Evaluated> init, bound;
  for (const CXCursor& k : kids) {
    if (clang_equalCursors(k, body)) continue;
    if (k.kind == CXCursor_DeclStmt && !init) {
      std::vector<CXCursor> decls = children(k);
      if (decls.size() == 1 && decls[0].kind == CXCursor_VarDecl) {
        std::vector<CXCursor> start = children(decls[0]);
        if (!start.empty()) {
          if (auto v = evaluateInt(start.back()))
            init = sourceTokens(start.back(), static_cast<double>(*v));
        }
      }
    } else if (k.kind == CXCursor_BinaryOperator && !bound) {
      std::vector<CXCursor> sides = children(k);
      if (sides.size() == 2) {
        if (auto v = evaluateInt(sides[1])) bound = sourceTokens(sides[1], static_cast<double>(*v));
      }
    }
  }
  if (!bound && !init) return;
  const auto value = [](const std::optional<TripCountSource::Evaluated>& e) {
    return e ? std::optional<double>(e->value) : std::nullopt;
  };
  n.loop.constant_trip = constantTripCount(tokens(header), value(init), value(bound));
  if (!n.loop.constant_trip) return;
  // A literal says its value itself.
  auto note = [&](std::optional<TripCountSource::Evaluated>& e) {
    if (e && !e->tokens.empty() && !(e->tokens.size() == 1 && numberToken(e->tokens[0])))
      n.loop.constant_trip_source.evaluated.push_back(std::move(*e));
  };
  note(init);
  note(bound);
}

// The tokens of a cursor's extent, whole up to kMaxExpressionText bytes (`cut` says when more
// were left out).
TripCountSource::Evaluated Builder::sourceTokens(CXCursor c, double value) {
  TripCountSource::Evaluated e{{}, value};
  size_t bytes = 0;
  for (std::string& t : tokens(clang_getCursorExtent(c))) {
    if (bytes > kMaxExpressionText) {
      e.cut = true;
      break;
    }
    bytes += t.size();
    e.tokens.push_back(std::move(t));
  }
  return e;
}

}  // namespace perfhat::analysis::ast_walk
