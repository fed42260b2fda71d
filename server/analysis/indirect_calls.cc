#include "server/analysis/indirect_calls.h"

#include "common/function_key.h"
#include "server/analysis/clang_cursor.h"
#include "server/analysis/translation_unit.h"

namespace perfhat::analysis {

namespace {

using ast_walk::children;
using ast_walk::scopePrefix;
using ast_walk::spelling;
using ast_walk::typeSpelling;

// `std::function<R(A...)>` (also `std::move_only_function`): its `operator()` calls whatever the
// object holds.
bool isStdFunction(CXCursor cls) {
  const std::string name = spelling(cls);
  if (name != "function" && name != "move_only_function") return false;
  return scopePrefix(cls).rfind("std::", 0) == 0;
}

std::string joinedParams(CXType fn) {
  std::string out = "(";
  const int n = clang_getNumArgTypes(fn);
  for (int i = 0; i < n; ++i) {
    if (i) out += ", ";
    out += normalizeTypeName(typeSpelling(clang_getArgType(fn, static_cast<unsigned>(i))));
  }
  if (clang_isFunctionTypeVariadic(fn)) out += n > 0 ? ", ..." : "...";
  return out + ")";
}

// The function type a callee expression's type calls: a pointer to function, a reference to
// one, a member-function pointer. Invalid when the type is none of these.
CXType calledFunctionType(CXType t) {
  t = clang_getCanonicalType(t);
  if (t.kind == CXType_Pointer || t.kind == CXType_LValueReference ||
      t.kind == CXType_RValueReference || t.kind == CXType_MemberPointer)
    t = clang_getCanonicalType(clang_getPointeeType(t));
  if (t.kind == CXType_FunctionProto || t.kind == CXType_FunctionNoProto) return t;
  return CXType{CXType_Invalid, {nullptr, nullptr}};
}

// The callee as written: the tokens of the callee expression, bounded for display.
std::string writtenName(CXCursor callee) {
  CXTranslationUnit tu = clang_Cursor_getTranslationUnit(callee);
  CXToken* toks = nullptr;
  unsigned n = 0;
  clang_tokenize(tu, clang_getCursorExtent(callee), &toks, &n);
  std::string out;
  for (unsigned i = 0; i < n && out.size() < 60; ++i) {
    std::string t = toString(clang_getTokenSpelling(tu, toks[i]));
    out += t;
  }
  if (toks) clang_disposeTokens(tu, toks, n);
  return out;
}

}  // namespace

IndirectCall classifyIndirectCall(CXCursor call, CXCursor ref) {
  IndirectCall out;
  std::vector<CXCursor> kids = children(call);
  if (!clang_Cursor_isNull(ref) && ref.kind == CXCursor_CXXMethod &&
      spelling(ref) == "operator()" && isStdFunction(clang_getCursorSemanticParent(ref))) {
    out.indirect = true;
    out.params = joinedParams(clang_getCursorType(ref));
    if (!kids.empty()) out.name = writtenName(kids[0]);
    return out;
  }
  // A call as written, a construction or conversion: only a variable, parameter or member of
  // callable type (or an expression, no declaration at all) can be called through.
  if (!clang_Cursor_isNull(ref) && ref.kind != CXCursor_VarDecl && ref.kind != CXCursor_ParmDecl &&
      ref.kind != CXCursor_FieldDecl)
    return out;
  if (kids.empty()) return out;
  // `fp(x)`, `(*fp)(x)`, `table[i](x)`, `(obj.*method)(x)`: the callee expression is the first
  // child; a member-function pointer call's is `obj.*method`, whose right side has the type.
  CXCursor callee = kids[0];
  CXType fn = calledFunctionType(clang_getCursorType(callee));
  if (fn.kind == CXType_Invalid) {
    CXCursor inner = callee;
    while (inner.kind == CXCursor_ParenExpr || inner.kind == CXCursor_UnexposedExpr) {
      std::vector<CXCursor> k = children(inner);
      if (k.empty()) break;
      inner = k[0];
    }
    std::vector<CXCursor> sides = children(inner);
    if (inner.kind == CXCursor_BinaryOperator && sides.size() == 2)
      fn = calledFunctionType(clang_getCursorType(sides[1]));
  }
  if (fn.kind == CXType_Invalid) return out;
  out.indirect = true;
  out.params = joinedParams(fn);
  out.name = writtenName(callee);
  return out;
}

std::string parameterListOf(std::string_view key) {
  // The last top-level parenthesis group, followed by qualifiers only.
  int depth = 0;
  size_t open = std::string_view::npos, close = std::string_view::npos;
  for (size_t i = 0; i < key.size(); ++i) {
    const char c = key[i];
    if (c == '(' || c == '<') {
      if (depth == 0 && c == '(') open = i;
      ++depth;
    } else if ((c == ')' || c == '>') && depth > 0) {
      if (--depth == 0 && c == ')') close = i;
    }
  }
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return "";
  std::string_view rest = key.substr(close + 1);
  for (std::string_view q : {" const", " volatile", " &&", " &"})
    if (rest.size() >= q.size() && rest.substr(0, q.size()) == q) rest.remove_prefix(q.size());
  if (!rest.empty()) return "";
  return std::string(key.substr(open, close - open + 1));
}

}  // namespace perfhat::analysis
