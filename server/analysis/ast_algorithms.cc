// The AST walk at a standard algorithm called with a lambda over a range
// (`std::accumulate(tasks.begin(), tasks.end(), 0.0, [](double s, const Task& t) { … })`): the
// algorithm calls the lambda once per element of the range, so the lambda's body also becomes
// the body of a loop over that range, as a range-for over the same collection would be, and its
// calls run per element. The lambda stays a function of its own as well (walkAt).
#include <set>
#include <string_view>

#include "server/analysis/ast_walker.h"

namespace perfhat::analysis::ast_walk {

namespace {

// Algorithms that call their function argument on each element of their first range: for the
// ones that may stop early (any_of, find_if, …) every element is the bound of what they do.
bool perElementAlgorithm(std::string_view name) {
  static const std::set<std::string_view, std::less<>> kNames = {
      "accumulate",       "all_of",    "any_of",          "copy_if",   "count_if",
      "erase_if",         "find_if",   "find_if_not",     "for_each",  "none_of",
      "partition",        "reduce",    "remove_copy_if",  "remove_if", "replace_if",
      "stable_partition", "transform", "transform_reduce"};
  return kNames.count(name) > 0;
}

// The lambda an argument is (through the conversions and temporaries around a lambda passed by
// value), or a null cursor.
CXCursor lambdaOf(CXCursor arg) {
  for (int depth = 0; depth < 4 && !clang_Cursor_isNull(arg); ++depth) {
    if (arg.kind == CXCursor_LambdaExpr) return arg;
    std::vector<CXCursor> k = children(arg);
    if (k.size() != 1) break;
    arg = k[0];
  }
  return clang_getNullCursor();
}

// The collection a first argument ranges over: `v` of `v.begin()` or `std::begin(v)`; the
// argument itself for the algorithms taking a range (`std::erase_if(v, …)`, std::ranges).
CXCursor rangeOf(CXCursor arg) {
  CXCursor e = stripConversions(arg);
  if (e.kind != CXCursor_CallExpr) return e;
  const std::string name = spelling(clang_getCursorReferenced(e));
  if (name != "begin" && name != "cbegin") return e;
  std::vector<CXCursor> k = children(e);
  if (!k.empty() && k[0].kind == CXCursor_MemberRefExpr) {  // v.begin()
    std::vector<CXCursor> object = children(k[0]);
    return object.empty() ? clang_getNullCursor() : object[0];
  }
  return clang_Cursor_getNumArguments(e) == 1 ? clang_Cursor_getArgument(e, 0)  // std::begin(v)
                                              : clang_getNullCursor();
}

}  // namespace

void Builder::walkAlgorithmLambda(CXCursor c, CXCursor ref, FnCtx& ctx, int parent, int arm) {
  if (clang_Location_isInSystemHeader(clang_getCursorLocation(ref)) == 0) return;
  if (!perElementAlgorithm(spelling(ref))) return;
  const int args = clang_Cursor_getNumArguments(c);
  if (args < 2) return;
  CXCursor lambda = clang_getNullCursor();
  for (int i = 1; i < args && clang_Cursor_isNull(lambda); ++i)
    lambda = lambdaOf(clang_Cursor_getArgument(c, i));
  if (clang_Cursor_isNull(lambda)) return;
  const CXCursor range = rangeOf(clang_Cursor_getArgument(c, 0));
  if (clang_Cursor_isNull(range)) return;

  Node n;
  n.kind = NodeKind::Loop;
  n.loop.kind = LoopKind::RangeFor;
  n.range = toRange(clang_getCursorExtent(c));
  n.hint = toPosition(clang_getRangeStart(clang_getCursorExtent(lambda)));
  // Not a loop of the source's own: production's loop records (by ordinal) do not count it.
  n.loop.ordinal = -1;
  // What the range is, as for a range-for (ast_loops.cc): a collection a call produces, or a
  // local variable (initialized from such a call, or filled by the function itself).
  CXCursor producer = firstCallUnder(range);
  if (std::string var = localVar(range); clang_Cursor_isNull(producer) && !var.empty()) {
    n.loop.range_var = var;
    n.loop.range_var_name = spelling(stripConversions(range));
    producer = firstCallUnder(clang_getCursorReferenced(stripConversions(range)));
  }
  if (!clang_Cursor_isNull(producer)) {
    const CalleeInfo& info = callee(clang_getCursorReferenced(producer));
    n.loop.producer_key = info.key;
    n.loop.producer_mangled = info.mangled;
  }
  const int id = addNode(ctx, std::move(n), parent, arm);
  // Only the body runs per element: a capture's initialiser runs once, where the lambda is
  // made, and is walked there (walkChildren of the call). The body is walked in this function's
  // context without counting its loops or lambdas here (they are the lambda's, and buildLambda
  // keys and counts them), so a nesting of algorithm lambdas is walked once per enclosing
  // function, not twice per level.
  CXCursor body = clang_getNullCursor();
  for (CXCursor child : children(lambda))
    if (child.kind == CXCursor_CompoundStmt) body = child;
  if (clang_Cursor_isNull(body)) return;
  const bool was_in = ctx.in_algorithm_lambda;
  const int loops = ctx.loop_counter, lambdas = ctx.lambda_counter;
  ctx.in_algorithm_lambda = true;
  std::vector<FunctionInfo> none;  // stays empty: no lambda is built in this walk
  walk(body, ctx, id, 0, none);
  ctx.in_algorithm_lambda = was_in;
  ctx.loop_counter = loops;
  ctx.lambda_counter = lambdas;
}

}  // namespace perfhat::analysis::ast_walk
