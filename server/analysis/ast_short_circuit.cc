// The AST walk at `a && b` / `a || b` whose right operand makes a call: the right operand runs
// only when the left one lets it (C++ evaluates it on demand), so it becomes the one arm of a
// two-arm branch whose condition is the left operand. Inference then weighs it as any arm:
// by production's count of a call it measured from this function there, else by a prior from
// the left operand as written (the static heuristics of `if`), else by an even prior, stated
// and widened like every prior. Operators without a call on the right stay plain expressions.
#include "server/analysis/ast_walker.h"

namespace perfhat::analysis::ast_walk {

namespace {

// A right operand this large is walked as a plain expression (as before): the search for a call
// in it stays bounded however long a generated chain of operators is.
constexpr int kMaxSearchedCursors = 64;

struct CallSearch {
  int visited = 0;
  bool found = false;
};

bool makesCall(CXCursor e) {
  CallSearch s;
  clang_visitChildren(
      e,
      [](CXCursor c, CXCursor, CXClientData data) {
        auto* s = static_cast<CallSearch*>(data);
        if (++s->visited > kMaxSearchedCursors) return CXChildVisit_Break;
        if (c.kind == CXCursor_LambdaExpr) return CXChildVisit_Continue;  // a body, not a call
        if (c.kind == CXCursor_CallExpr) {
          s->found = true;
          return CXChildVisit_Break;
        }
        return CXChildVisit_Recurse;
      },
      &s);
  return s.found || e.kind == CXCursor_CallExpr;
}

}  // namespace

// '&' for `&&`, '|' for `||`, 0 for any other cursor.
char Builder::shortCircuitOperator(CXCursor c) {
  if (c.kind != CXCursor_BinaryOperator) return 0;
  std::vector<CXCursor> k = children(c);
  if (k.size() != 2) return 0;
  // The range starts at the end of the left operand: its last token may come first.
  for (const std::string& t :
       tokens(clang_getRange(clang_getRangeEnd(clang_getCursorExtent(k[0])),
                             clang_getRangeStart(clang_getCursorExtent(k[1]))))) {
    if (t == "&&" || t == "and") return '&';
    if (t == "||" || t == "or") return '|';
  }
  return 0;
}

bool Builder::isShortCircuitWithCall(CXCursor c) {
  if (c.kind != CXCursor_BinaryOperator || !shortCircuitOperator(c)) return false;
  std::vector<CXCursor> k = children(c);
  return k.size() == 2 && makesCall(k[1]);
}

// `a && b && c` nests to the left: `(a && b) && c`. The chain's operators are taken from the
// outermost down in one loop and their branches are added as siblings, innermost first, so a
// generated chain of thousands does not deepen the walk (nor the node tree): `c`'s branch has
// `a && b` as its condition, already walked as the branch before it.
void Builder::walkShortCircuit(CXCursor c, FnCtx& ctx, int parent, int arm,
                               std::vector<FunctionInfo>& lambdas) {
  std::vector<std::vector<CXCursor>> chain{children(c)};  // each operator's two operands
  std::vector<char> ops{shortCircuitOperator(c)};
  while (isShortCircuitWithCall(chain.back()[0])) {
    const CXCursor inner = chain.back()[0];
    ops.push_back(shortCircuitOperator(inner));
    chain.push_back(children(inner));
  }
  for (size_t i = chain.size(); i-- > 0;) {
    const std::vector<CXCursor>& k = chain[i];
    const char op = ops[i];
    Node n;
    n.kind = NodeKind::Branch;
    n.range = toRange(clang_getRange(clang_getRangeStart(clang_getCursorExtent(k[0])),
                                     clang_getRangeEnd(clang_getCursorExtent(k[1]))));
    n.hint = n.range.end;
    n.branch.arms = 2;
    // Arm 0 is the right operand: it runs when the left one holds (&&) or fails (||).
    Prior left;
    conditionPrior(k[0], left);
    const double holds = left.any ? left.taken : 0.5;
    n.branch.prior = op == '&' ? holds : 1 - holds;
    n.branch.prior_reason = {
        op == '&' ? BranchPrior::ShortCircuit::And : BranchPrior::ShortCircuit::Or, left.reason};
    const int id = addNode(ctx, std::move(n), parent, arm);
    if (i + 1 == chain.size()) walk(k[0], ctx, id, -1, lambdas);  // the chain's first operand
    walk(k[1], ctx, id, 0, lambdas);
  }
}

}  // namespace perfhat::analysis::ast_walk
