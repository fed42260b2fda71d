// The AST walk at a call: the callee's key, mangling and body lookup (once per callee per TU),
// which calls are calls as written, and which the compiler folds to a constant.
#include "server/analysis/ast_walker.h"
#include "server/analysis/indirect_calls.h"

#include <set>
#include <string>

namespace perfhat::analysis::ast_walk {

namespace {

// `Base::f()`, `obj.Base::f()` name their function: no virtual dispatch. The member reference
// then has the qualifier as a type or namespace reference among its children.
bool qualifiedCall(CXCursor call) {
  for (CXCursor callee : children(call)) {
    if (callee.kind != CXCursor_MemberRefExpr) continue;
    for (CXCursor part : children(callee))
      if (part.kind == CXCursor_TypeRef || part.kind == CXCursor_NamespaceRef ||
          part.kind == CXCursor_TemplateRef)
        return true;
    return false;
  }
  return false;
}

// Members that add an element to the container they are called on.
bool isInsertion(const std::string& name) {
  static const std::set<std::string, std::less<>> kNames = {
      "insert",    "emplace",    "emplace_back", "emplace_front", "emplace_hint",
      "push_back", "push_front", "push",         "try_emplace",   "insert_or_assign"};
  return kNames.count(name) > 0;
}

// `m[k]` inserts k when it is missing where the container maps keys to values it
// default-constructs (std::map, std::unordered_map and their like); a sequence's `v[i]` does not.
bool subscriptInserts(CXCursor method) {
  static const std::set<std::string, std::less<>> kMaps = {"map", "unordered_map", "flat_map"};
  return spelling(method) == "operator[]" &&
         kMaps.count(spelling(clang_getCursorSemanticParent(method))) > 0;
}

// A local the function starts empty itself: not static (it keeps what earlier calls put in),
// not a reference (`auto& c = cache_;` names a container filled elsewhere), and declared without
// an initializer or with an empty one (`std::map<K, V> m;`, `m{}`), not copied from another.
bool startsEmptyHere(CXCursor e) {
  e = stripConversions(e);
  if (e.kind != CXCursor_DeclRefExpr) return false;
  CXCursor var = clang_getCursorReferenced(e);
  if (var.kind != CXCursor_VarDecl || clang_Cursor_getStorageClass(var) == CX_SC_Static ||
      clang_getCursorTLSKind(var) != CXTLS_None)
    return false;
  const CXTypeKind t = clang_getCursorType(var).kind;
  if (t == CXType_LValueReference || t == CXType_RValueReference) return false;
  for (CXCursor k : children(var)) {
    if (k.kind == CXCursor_TypeRef || k.kind == CXCursor_TemplateRef ||
        k.kind == CXCursor_NamespaceRef)
      continue;
    // The initializer: a constructor call with no arguments or an empty braced list is empty.
    if (k.kind == CXCursor_CallExpr && clang_Cursor_getNumArguments(k) == 0) continue;
    if (k.kind == CXCursor_InitListExpr && children(k).empty()) continue;
    return false;
  }
  return true;
}

// `m[k]`: the local variable subscripted (an operator call's first argument is its object),
// when the function starts it empty: the map then holds no more than what its `m[k]` insert.
std::string subscriptedVar(CXCursor call) {
  if (clang_Cursor_getNumArguments(call) == 0) return {};
  CXCursor object = clang_Cursor_getArgument(call, 0);
  return startsEmptyHere(object) ? localVar(object) : std::string();
}

// `ids.insert(x)`: the local variable the member is called on.
std::string receiverVar(CXCursor call) {
  std::vector<CXCursor> k = children(call);
  if (k.empty() || k[0].kind != CXCursor_MemberRefExpr) return {};
  std::vector<CXCursor> object = children(k[0]);
  return object.empty() ? std::string() : localVar(object[0]);
}

// The local variables a call names as its object or as whole arguments, by name.
std::vector<std::string> localNamesRead(CXCursor call) {
  std::vector<std::string> out;
  auto note = [&out](CXCursor e) {
    if (!localVar(e).empty()) out.push_back(spelling(stripConversions(e)));
  };
  std::vector<CXCursor> k = children(call);
  if (!k.empty() && k[0].kind == CXCursor_MemberRefExpr) {
    std::vector<CXCursor> object = children(k[0]);
    if (!object.empty()) note(object[0]);
  }
  const int args = clang_Cursor_getNumArguments(call);
  for (int i = 0; i < args; ++i) note(clang_Cursor_getArgument(call, i));
  return out;
}

// Asking libclang to evaluate costs ~10 k instructions per call, and in C++20 most standard
// library members are constexpr, so calls are first screened by what they read: a constant
// expression cannot read a parameter, a variable whose type is not const, or the object of a
// member function (`this`, explicit or implicit). Such a call is never folded.
bool readsRuntimeState(CXCursor call) {
  bool runtime = false;
  clang_visitChildren(
      call,
      [](CXCursor c, CXCursor, CXClientData data) {
        bool& found = *static_cast<bool*>(data);
        if (c.kind == CXCursor_CXXThisExpr) {
          found = true;
        } else if (c.kind == CXCursor_DeclRefExpr || c.kind == CXCursor_MemberRefExpr) {
          CXCursor ref = clang_getCursorReferenced(c);
          if (ref.kind == CXCursor_ParmDecl) {
            found = true;
          } else if (ref.kind == CXCursor_VarDecl) {
            found = !clang_isConstQualifiedType(clang_getCursorType(ref));
          } else if (c.kind == CXCursor_MemberRefExpr && children(c).empty()) {
            // `field` or `method()` inside a member function: an implicit `this->`.
            found = ref.kind == CXCursor_FieldDecl ||
                    (ref.kind == CXCursor_CXXMethod && !clang_CXXMethod_isStatic(ref));
          }
        }
        return found ? CXChildVisit_Break : CXChildVisit_Recurse;
      },
      &runtime);
  return runtime;
}

bool isCompileTimeConstant(CXCursor call) {
  if (readsRuntimeState(call)) return false;
  CXEvalResult r = clang_Cursor_Evaluate(call);
  if (!r) return false;
  clang_EvalResult_dispose(r);
  return true;
}

bool isConstruction(CXCursor ref) {
  return ref.kind == CXCursor_Constructor || ref.kind == CXCursor_ClassDecl ||
         ref.kind == CXCursor_StructDecl || ref.kind == CXCursor_ClassTemplate ||
         ref.kind == CXCursor_TypedefDecl || ref.kind == CXCursor_TypeAliasDecl ||
         ref.kind == CXCursor_ConversionFunction;
}

}  // namespace

// Key, mangling and definition lookup of a referenced function, computed once per function
// per TU: a file calls the same few functions many times, and clang_Cursor_getMangling
// builds a mangling context on every call.
const Builder::CalleeInfo& Builder::callee(CXCursor ref) {
  auto& bucket = callee_cache_[clang_hashCursor(ref)];
  for (const auto& info : bucket)
    if (clang_equalCursors(info.cursor, ref)) return info;
  bucket.push_back(CalleeInfo{ref, functionKeyOf(ref), mangledOf(ref), hasWorkspaceBody(ref),
                              declaredConstexpr(ref)});
  return bucket.back();
}

// Whether the declaration's tokens before its name hold `constexpr` or `consteval` (every
// declaration of such a function must say so). Only those calls can be folded, and asking
// libclang to evaluate every call cost ~15 % of the analysis. Unknown (no tokens, e.g. a
// declaration made by a macro) counts as maybe.
bool Builder::declaredConstexpr(CXCursor ref) {
  CXSourceRange head =
      clang_getRange(clang_getRangeStart(clang_getCursorExtent(ref)), clang_getCursorLocation(ref));
  CXToken* toks = nullptr;
  unsigned n = 0;
  clang_tokenize(tu_.raw(), head, &toks, &n);
  bool found = n == 0;
  for (unsigned i = 0; i < n && !found; ++i) {
    if (clang_getTokenKind(toks[i]) != CXToken_Keyword) continue;
    std::string t = toString(clang_getTokenSpelling(tu_.raw(), toks[i]));
    found = t == "constexpr" || t == "consteval";
  }
  if (toks) clang_disposeTokens(tu_.raw(), toks, n);
  return found;
}

void Builder::walkCall(CXCursor c, FnCtx& ctx, int parent, int arm,
                       std::vector<FunctionInfo>& lambdas) {
  CXCursor ref = clang_getCursorReferenced(c);
  // Constructions, conversions and calls through pointers are not calls as written (trap 4).
  bool is_call = !clang_Cursor_isNull(ref) &&
                 (ref.kind == CXCursor_FunctionDecl || ref.kind == CXCursor_CXXMethod ||
                  ref.kind == CXCursor_FunctionTemplate);
  if (!is_call && (clang_Cursor_isNull(ref) || !isConstruction(ref))) ++ctx.fn.unresolved_calls;
  if (is_call && !writtenInSource(c, ref)) is_call = false;
  IndirectCall indirect = classifyIndirectCall(c, ref);  // std::function's operator() too
  if (indirect.indirect) is_call = false;
  // A call the compiler folds to a constant (a constexpr function with constant arguments:
  // constexpr initializers, static_assert, the probe macros' bookkeeping) costs nothing at
  // run time and has no production data; it is not a node, and neither are its arguments.
  if (is_call) {
    const CalleeInfo& info = callee(ref);
    if (info.maybe_constexpr && isCompileTimeConstant(c)) return;
    Node n;
    n.kind = NodeKind::Call;
    n.range = toRange(clang_getCursorExtent(c));
    n.hint = n.range.end;
    n.call.key = info.key;
    n.call.mangled = info.mangled;
    n.call.name = spelling(c);
    if (n.call.name.empty()) n.call.name = spelling(ref);
    n.call.via_lambda = ctx.in_algorithm_lambda;
    n.call.in_workspace = info.in_workspace;
    n.call.system = clang_Location_isInSystemHeader(clang_getCursorLocation(ref)) != 0;
    if (ref.kind == CXCursor_CXXMethod) n.call.receiver_var = receiverVar(c);
    n.call.local_names = localNamesRead(c);
    if (ref.kind == CXCursor_CXXMethod && isInsertion(spelling(ref)))
      n.call.fills_var = n.call.receiver_var;
    if (ref.kind == CXCursor_CXXMethod && subscriptInserts(ref))
      n.call.fills_var = subscriptedVar(c);
    n.call.is_virtual =
        ref.kind == CXCursor_CXXMethod && clang_CXXMethod_isVirtual(ref) && !qualifiedCall(c);
    addNode(ctx, std::move(n), parent, arm);
    walkAlgorithmLambda(c, ref, ctx, parent, arm);
  } else if (indirect.indirect) {
    Node n;
    n.kind = NodeKind::Call;
    n.range = toRange(clang_getCursorExtent(c));
    n.hint = n.range.end;
    n.call.name = std::move(indirect.name);
    n.call.indirect = true;
    n.call.params = std::move(indirect.params);
    n.call.via_lambda = ctx.in_algorithm_lambda;
    addNode(ctx, std::move(n), parent, arm);
  }
  walkChildren(c, ctx, parent, arm, lambdas);  // argument calls are siblings, not children
}

// Operator calls the compiler inserts (a range-for's `operator*`/`operator!=`/`operator++`,
// implicit conversions such as `operator bool`) are not calls as written: their extent does
// not contain the operator's own token (a range-for's `operator*` spans only the `:`).
bool Builder::writtenInSource(CXCursor call, CXCursor ref) {
  std::string name = spelling(ref);
  if (name.rfind("operator", 0) != 0) return true;
  std::string symbol = name.substr(8);
  while (!symbol.empty() && symbol.front() == ' ') symbol.erase(0, 1);
  if (symbol.empty()) return true;
  if (symbol == "()" || symbol == "[]") symbol = symbol.substr(0, 1);
  for (const std::string& t : tokens(clang_getCursorExtent(call))) {
    if (t == symbol) return true;
  }
  return false;
}

bool Builder::hasWorkspaceBody(CXCursor ref) {
  CXCursor def = clang_getCursorDefinition(ref);
  if (clang_Cursor_isNull(def) || clang_isInvalid(def.kind)) return false;
  CXSourceLocation loc = clang_getCursorLocation(def);
  if (clang_Location_isInSystemHeader(loc)) return false;
  std::string file = expansionFile(loc);
  return file == main_file_ || inWorkspace(file);
}

}  // namespace perfhat::analysis::ast_walk
