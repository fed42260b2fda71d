// The AST walk at a branch (if / switch / ?:): arms, `continue` guards, and the static branch
// priors (Ball & Larus heuristics) inference states as assumptions.
#include "server/analysis/ast_walker.h"

#include <cctype>
#include <optional>
#include <set>
#include <string>

namespace perfhat::analysis::ast_walk {

namespace {

// `continue;` or `{ continue; }`.
bool isContinue(CXCursor stmt) {
  if (stmt.kind == CXCursor_ContinueStmt) return true;
  if (stmt.kind != CXCursor_CompoundStmt) return false;
  std::vector<CXCursor> body = children(stmt);
  return body.size() == 1 && body[0].kind == CXCursor_ContinueStmt;
}

CXTypeKind typeKind(CXCursor e) { return clang_getCanonicalType(clang_getCursorType(e)).kind; }

bool isPointerType(CXTypeKind k) {
  return k == CXType_Pointer || k == CXType_MemberPointer || k == CXType_NullPtr ||
         k == CXType_BlockPointer;
}

bool isIntegerType(CXTypeKind k) {
  return (k >= CXType_Char_U && k <= CXType_UInt128 && k != CXType_Bool) ||
         (k >= CXType_Char_S && k <= CXType_Int128);
}

bool isFloatType(CXTypeKind k) { return k >= CXType_Float && k <= CXType_LongDouble; }

// The integer value of a constant expression (a literal, an enumerator, a constexpr).
std::optional<long long> intConstant(CXCursor e) {
  CXEvalResult r = clang_Cursor_Evaluate(e);
  if (!r) return std::nullopt;
  std::optional<long long> v;
  if (clang_EvalResult_getKind(r) == CXEval_Int) v = clang_EvalResult_getAsLongLong(r);
  clang_EvalResult_dispose(r);
  return v;
}

// How a statement leaves: 't' throws, 'r' returns, 'b' breaks, 0 falls through (a block as
// its last statement does).
char exitOf(CXCursor stmt) {
  if (stmt.kind == CXCursor_CompoundStmt) {
    std::vector<CXCursor> body = children(stmt);
    return body.empty() ? 0 : exitOf(body.back());
  }
  if (stmt.kind == CXCursor_ReturnStmt) return 'r';
  if (stmt.kind == CXCursor_BreakStmt) return 'b';
  if (stripConversions(stmt).kind == CXCursor_CXXThrowExpr) return 't';
  return 0;
}

}  // namespace

// True when the text after `pos` (skipping blanks, one `;` and comments) starts with `else`.
bool Builder::elseFollows(Position pos) {
  int line = pos.line;
  size_t col = static_cast<size_t>(pos.column);
  bool semicolon = false;
  while (line < static_cast<int>(lines_.size())) {
    std::string_view l = lines_[line];
    while (col < l.size()) {
      char ch = l[col];
      if (ch == ' ' || ch == '\t' || ch == '\r') {
        ++col;
      } else if (ch == ';' && !semicolon) {
        semicolon = true;
        ++col;
      } else if (l.substr(col, 2) == "//") {
        col = l.size();
      } else {
        return l.substr(col, 4) == "else" &&
               (col + 4 >= l.size() ||
                !(std::isalnum(static_cast<unsigned char>(l[col + 4])) || l[col + 4] == '_'));
      }
    }
    ++line;
    col = 0;
  }
  return false;
}

// Whether the first token of `c` is `t`, without tokenizing the whole extent.
bool Builder::firstTokenIs(CXCursor c, std::string_view t) {
  CXSourceLocation start = clang_getRangeStart(clang_getCursorExtent(c));
  CXToken* tok = clang_getToken(tu_.raw(), start);
  if (!tok) return false;
  bool is = toString(clang_getTokenSpelling(tu_.raw(), *tok)) == t;
  clang_disposeTokens(tu_.raw(), tok, 1);
  return is;
}

// Pointer, zero and opcode heuristics on the condition as written.
void Builder::conditionPrior(CXCursor cond, Prior& out) {
  if (cond.kind == CXCursor_VarDecl) {  // `if (auto* p = find())`: the variable is tested
    const CXTypeKind k = clang_getCanonicalType(clang_getCursorType(cond)).kind;
    if (isPointerType(k) || k == CXType_Record) out.add(kLikely, {BranchHeuristic::PointerNonNull});
    return;
  }
  // `!!!…x`: peel the negations in a loop (a generated chain of them is no deeper here).
  CXCursor e = stripConversions(cond);
  std::vector<CXCursor> k = children(e);
  int negations = 0;
  while (e.kind == CXCursor_UnaryOperator && k.size() == 1 && firstTokenIs(e, "!")) {
    ++negations;
    e = stripConversions(k[0]);
    k = children(e);
  }
  if (negations > 0) {
    if (e.kind == CXCursor_VarDecl) return;
    Prior inner;
    conditionPrior(e, inner);
    // The inner condition matches one heuristic at most (it is no negation).
    if (inner.any) {
      const bool odd = negations % 2 == 1;
      HeuristicMatch m = inner.reason.front();
      m.negated = odd;
      out.add(odd ? 1 - inner.taken : inner.taken, m);
    }
    return;
  }
  if (e.kind == CXCursor_BinaryOperator && k.size() == 2) {
    std::vector<std::string> op =
        tokens(clang_getRange(clang_getRangeEnd(clang_getCursorExtent(k[0])),
                              clang_getRangeStart(clang_getCursorExtent(k[1]))));
    // The range starts at the end of the left operand: its last token may come first.
    std::string o;
    for (const std::string& t : op)
      if (t == "==" || t == "!=" || t == "<" || t == "<=") o = t;
    if (o.empty()) return;
    CXCursor l = stripConversions(k[0]), r = stripConversions(k[1]);
    const CXTypeKind lk = typeKind(l), rk = typeKind(r);
    const bool eq = o == "==";
    if (o == "==" || o == "!=") {
      if (isPointerType(lk) || isPointerType(rk)) {
        out.add(eq ? 1 - kLikely : kLikely,
                {eq ? BranchHeuristic::PointerEqual : BranchHeuristic::PointerNotEqual});
      } else if (isFloatType(lk) || isFloatType(rk)) {
        out.add(eq ? 1 - kLikely : kLikely, {BranchHeuristic::FloatEqual});
      } else if (intConstant(r) || intConstant(l)) {
        out.add(eq ? 1 - kLikely : kLikely,
                {eq ? BranchHeuristic::OpcodeEqual : BranchHeuristic::OpcodeNotEqual});
      }
    } else if (isIntegerType(lk) && intConstant(r) == 0) {
      out.add(1 - kLikely, {BranchHeuristic::OpcodeNegative});
    }
    return;
  }
  const CXTypeKind t = typeKind(e);
  if (isPointerType(t)) out.add(kLikely, {BranchHeuristic::PointerNonNull});
  // A class tested for truth converts through `operator bool`: a smart pointer, an optional,
  // an expected — a null/empty check, as for a raw pointer.
  else if (t == CXType_Record)
    out.add(kLikely, {BranchHeuristic::PointerNonEmpty});
  else if (isIntegerType(t))
    out.add(kLikely, {BranchHeuristic::ZeroNonZero});
}

// Return / loop-exit / error-path heuristics: the arm that leaves is the unlikely one.
void Builder::exitPrior(char then_exit, char else_exit, Prior& out) {
  if (then_exit == else_exit) return;
  // Of two different exits (exitOf) the lower-ranked is a throw, a break or a return.
  auto unlikely = [](char x) -> std::pair<double, BranchHeuristic> {
    if (x == 't') return {4.0 / 128, BranchHeuristic::ErrorThrows};
    if (x == 'r') return {0.28, BranchHeuristic::ReturnEarly};
    return {0.20, BranchHeuristic::LoopExit};
  };
  // Rank: throw < break < return < fall through; the lower-ranked arm is the unlikely one.
  auto rank = [](char x) { return x == 't' ? 0 : x == 'b' ? 1 : x == 'r' ? 2 : 3; };
  if (rank(then_exit) < rank(else_exit)) {
    auto [p, why] = unlikely(then_exit);
    out.add(p, {why});
  } else {
    auto [p, why] = unlikely(else_exit);
    out.add(1 - p, {why, false, true});
  }
}

namespace {

bool isName(const std::string& t) {
  static const std::set<std::string, std::less<>> kLiterals = {"true", "false", "nullptr", "this"};
  return !t.empty() && (std::isalpha(static_cast<unsigned char>(t[0])) || t[0] == '_') &&
         kLiterals.count(t) == 0;
}

// A condition's code tokens, each with whether libclang resolves it to a template (`f<T>(x)`,
// `std::vector<int>`): a name followed by `<` is a template only then; otherwise the `<` is a
// comparison (`i < n`) and the name an operand like any other.
struct ConditionToken {
  std::string text;
  bool template_name = false;
};

bool namesTemplate(CXCursor c) {
  if (c.kind == CXCursor_TemplateRef || c.kind == CXCursor_OverloadedDeclRef) return true;
  CXCursor ref = clang_getCursorReferenced(c);
  if (clang_Cursor_isNull(ref)) return false;
  return ref.kind == CXCursor_FunctionTemplate || ref.kind == CXCursor_ClassTemplate ||
         ref.kind == CXCursor_TypeAliasTemplateDecl ||
         !clang_Cursor_isNull(clang_getSpecializedCursorTemplate(ref));
}

unsigned offsetOf(CXSourceLocation loc) {
  unsigned offset = 0;
  clang_getExpansionLocation(loc, nullptr, nullptr, nullptr, &offset);
  return offset;
}

// Where the condition's cursors name a template. Found by visiting the condition alone:
// clang_annotateTokens walks down from the translation unit for every call, which made a chain
// of 4,000 `else if`s take minutes.
std::set<unsigned> templateNameOffsets(CXCursor condition) {
  std::set<unsigned> out;
  clang_visitChildren(
      condition,
      [](CXCursor c, CXCursor, CXClientData data) {
        if (namesTemplate(c))
          static_cast<std::set<unsigned>*>(data)->insert(offsetOf(clang_getCursorLocation(c)));
        return CXChildVisit_Recurse;
      },
      &out);
  if (namesTemplate(condition)) out.insert(offsetOf(clang_getCursorLocation(condition)));
  return out;
}

std::vector<ConditionToken> conditionTokens(CXTranslationUnit tu, CXCursor condition) {
  CXToken* toks = nullptr;
  unsigned n = 0;
  clang_tokenize(tu, clang_getCursorExtent(condition), &toks, &n);
  std::set<unsigned> templates;
  bool looked = false;
  std::vector<ConditionToken> out;
  for (unsigned i = 0; i < n; ++i) {
    if (clang_getTokenKind(toks[i]) == CXToken_Comment) continue;
    ConditionToken t;
    t.text = toString(clang_getTokenSpelling(tu, toks[i]));
    // Only a name followed by `<` needs to know (conditionShape); most conditions have none.
    if (clang_getTokenKind(toks[i]) == CXToken_Identifier && i + 1 < n &&
        toString(clang_getTokenSpelling(tu, toks[i + 1])) == "<") {
      if (!looked) templates = templateNameOffsets(condition);
      looked = true;
      t.template_name = templates.count(offsetOf(clang_getTokenLocation(tu, toks[i]))) > 0;
    }
    out.push_back(std::move(t));
  }
  if (toks) clang_disposeTokens(tu, toks, n);
  return out;
}

// A condition as the diff compares it: its tokens, each name of a variable written as `_`, so
// that a renamed local leaves it the same while a changed operator, operand, call, member or
// constant does not. A name is a variable's unless a call, a scope, a member access or (when
// libclang resolves it to a template) a template argument list follows or precedes it.
std::string conditionShape(const std::vector<ConditionToken>& toks) {
  std::string out;
  for (size_t i = 0; i < toks.size(); ++i) {
    const std::string& t = toks[i].text;
    const std::string next = i + 1 < toks.size() ? toks[i + 1].text : std::string();
    const std::string prev = i > 0 ? toks[i - 1].text : std::string();
    const bool variable = isName(t) && next != "(" && next != "::" &&
                          !(next == "<" && toks[i].template_name) && prev != "::" && prev != "." &&
                          prev != "->";
    out += (out.empty() ? "" : " ") + (variable ? std::string("_") : t);
  }
  return out;
}

}  // namespace

void Builder::walkBranch(CXCursor c, FnCtx& ctx, int parent, int arm,
                         std::vector<FunctionInfo>& lambdas) {
  std::vector<CXCursor> kids = children(c);
  if (kids.empty()) return;
  Node n;
  n.kind = NodeKind::Branch;
  n.range = toRange(clang_getCursorExtent(c));
  std::vector<int> arms(kids.size(), -1);
  bool guard = false;
  if (c.kind == CXCursor_IfStmt) {
    n.branch.arms = 2;
    size_t k = kids.size();
    bool has_else =
        k >= 3 && elseFollows(toPosition(clang_getRangeEnd(clang_getCursorExtent(kids[k - 2]))));
    if (has_else) {
      arms[k - 2] = 0;
      arms[k - 1] = 1;
    } else {
      arms[k - 1] = 0;
      // `if (c) continue; rest…` in a loop body is `if (c) continue; else { rest… }`: the
      // statements after the guard become its second arm (walkChildren), so they are
      // weighted by the probability the guard is not taken, like any other arm.
      if (isContinue(kids[k - 1]) && parent >= 0 && ctx.fn.nodes[parent].kind == NodeKind::Loop &&
          arm == 0)
        guard = true;
    }
    n.hint = toPosition(clang_getRangeStart(clang_getCursorExtent(kids[has_else ? k - 2 : k - 1])));
    const size_t then_at = has_else ? k - 2 : k - 1;
    Prior prior;
    if (then_at >= 1) {
      conditionPrior(kids[then_at - 1], prior);
      n.branch.condition = conditionShape(conditionTokens(tu_.raw(), kids[then_at - 1]));
    }
    exitPrior(exitOf(kids[then_at]), has_else ? exitOf(kids[k - 1]) : 0, prior);
    if (prior.any) {
      n.branch.prior = prior.taken;
      n.branch.prior_reason.heuristics = prior.reason;
    }
  } else if (c.kind == CXCursor_ConditionalOperator) {
    n.branch.arms = 2;
    if (kids.size() == 3) {
      arms[1] = 0;
      arms[2] = 1;
      Prior prior;
      conditionPrior(kids[0], prior);
      n.branch.condition = conditionShape(conditionTokens(tu_.raw(), kids[0]));
      if (prior.any) {
        n.branch.prior = prior.taken;
        n.branch.prior_reason.heuristics = prior.reason;
      }
    }
    n.hint = n.range.end;
  } else {  // switch: the arms are inside the body
    n.hint = toPosition(clang_getRangeStart(clang_getCursorExtent(kids.back())));
  }
  int id = addNode(ctx, std::move(n), parent, arm);
  if (c.kind == CXCursor_SwitchStmt) {
    for (size_t i = 0; i + 1 < kids.size(); ++i) walk(kids[i], ctx, id, -1, lambdas);
    int label = -1;
    bool has_default = false;
    CXCursor body = kids.back();
    std::vector<CXCursor> stmts =
        body.kind == CXCursor_CompoundStmt ? children(body) : std::vector<CXCursor>{body};
    for (CXCursor s : stmts) {
      if (s.kind == CXCursor_CaseStmt || s.kind == CXCursor_DefaultStmt) {
        ++label;
        has_default |= s.kind == CXCursor_DefaultStmt;
      }
      walk(s, ctx, id, label, lambdas);
    }
    ctx.fn.nodes[id].branch.arms = label + 1 + (has_default ? 0 : 1);
    return;
  }
  for (size_t i = 0; i < kids.size(); ++i) walk(kids[i], ctx, id, arms[i], lambdas);
  if (guard) ctx.guard = id;  // after the walks above, which reset it
}

}  // namespace perfhat::analysis::ast_walk
