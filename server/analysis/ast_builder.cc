#include "server/analysis/ast_builder.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>
#include <regex>
#include <set>

#include "common/function_key.h"
#include "server/analysis/annotation.h"
#include "server/analysis/implicit_members.h"

namespace perfhat::analysis {
namespace {

std::vector<CXCursor> children(CXCursor c) {
  std::vector<CXCursor> out;
  clang_visitChildren(
      c,
      [](CXCursor child, CXCursor, CXClientData data) {
        static_cast<std::vector<CXCursor>*>(data)->push_back(child);
        return CXChildVisit_Continue;
      },
      &out);
  return out;
}

std::string spelling(CXCursor c) { return toString(clang_getCursorSpelling(c)); }

bool isFunctionKind(CXCursorKind k) {
  return k == CXCursor_FunctionDecl || k == CXCursor_CXXMethod || k == CXCursor_Constructor ||
         k == CXCursor_Destructor || k == CXCursor_FunctionTemplate ||
         k == CXCursor_ConversionFunction;
}

bool isClassKind(CXCursorKind k) {
  return k == CXCursor_ClassDecl || k == CXCursor_StructDecl || k == CXCursor_UnionDecl ||
         k == CXCursor_ClassTemplate || k == CXCursor_ClassTemplatePartialSpecialization;
}

std::string typeSpelling(CXType t) {
  // Canonical types resolve typedefs and qualify names fully; template parameters have no
  // useful canonical spelling (`type-parameter-0-0`), so those keep the written one.
  std::string canonical = toString(clang_getTypeSpelling(clang_getCanonicalType(t)));
  if (canonical.find("type-parameter") != std::string::npos || canonical.empty())
    return toString(clang_getTypeSpelling(t));
  return canonical;
}

// Semantic parents as a key prefix ("ns::Class::"), or an enclosing function's key.
std::string scopePrefix(CXCursor c) {
  std::vector<std::string> parts;
  CXCursor p = clang_getCursorSemanticParent(c);
  while (!clang_Cursor_isNull(p) && !clang_isInvalid(p.kind) &&
         p.kind != CXCursor_TranslationUnit) {
    if (p.kind == CXCursor_Namespace) {
      std::string n = spelling(p);
      parts.push_back(n.empty() || clang_Cursor_isAnonymous(p) ? "(anonymous namespace)" : n);
    } else if (isClassKind(p.kind) || p.kind == CXCursor_EnumDecl) {
      std::string n = toString(clang_getCursorDisplayName(p));
      parts.push_back(n.empty() ? "(anonymous struct)" : n);
    } else if (isFunctionKind(p.kind)) {
      parts.push_back(functionKeyOf(p));  // local class: the enclosing function's full key
      break;
    }
    // extern "C" blocks come back as UnexposedDecl or LinkageSpec: transparent (trap 3).
    p = clang_getCursorSemanticParent(p);
  }
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) out += *it + "::";
  return out;
}

std::string mangledOf(CXCursor c) {
  if (c.kind == CXCursor_FunctionTemplate) return "";
  return toString(clang_Cursor_getMangling(c));
}

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

struct FnCtx {
  FunctionInfo fn;
  int loop_counter = 0;
  int lambda_counter = 0;
  int guard = -1;          // id of the `continue` guard walkBranch just added, for walkChildren
  bool truncated = false;  // the walk stopped at AnalysisOptions::max_nesting_depth
};

class Builder {
 public:
  Builder(const TranslationUnit& tu, const AnalysisOptions& options, ParsedUnit& out)
      : tu_(tu), options_(options), out_(out) {
    main_file_ = tu.path();
    root_ = options.workspace_root.empty()
                ? std::string()
                : std::filesystem::absolute(options.workspace_root).lexically_normal().string();
    std::string_view text = tu.contents();
    size_t start = 0;
    for (size_t i = 0; i <= text.size(); ++i) {
      if (i == text.size() || text[i] == '\n') {
        lines_.push_back(text.substr(start, i - start));
        start = i + 1;
      }
    }
  }

  void visitDecls(CXCursor parent) {
    for (CXCursor c : children(parent)) {
      CXSourceLocation loc = clang_getCursorLocation(c);
      if (clang_Location_isInSystemHeader(loc)) continue;
      std::string file = expansionFile(loc);
      bool main = file == main_file_;
      if (!main && !inWorkspace(file)) continue;
      if (c.kind == CXCursor_Namespace || c.kind == CXCursor_LinkageSpec ||
          c.kind == CXCursor_UnexposedDecl || isClassKind(c.kind)) {
        visitDecls(c);
        if (main && isClassKind(c.kind)) implicitMembers(c, file, out_.functions);
      } else if (isFunctionKind(c.kind) && clang_isCursorDefinition(c)) {
        std::vector<FunctionInfo> fns = buildFunction(c, file);
        for (auto& f : fns) {
          if (main) {
            // An error inside the body may hide calls that error recovery dropped.
            for (const ParseProblem& p : out_.problems)
              if (p.error && f.range.contains(p.range.start)) ++f.unresolved_calls;
            out_.functions.push_back(std::move(f));
          } else {
            std::string key = f.key;
            out_.workspace_bodies.emplace(std::move(key), std::move(f));
          }
        }
      }
    }
  }

 private:
  bool inWorkspace(const std::string& file) {
    if (root_.empty() || file.empty()) return false;
    auto it = workspace_cache_.find(file);
    if (it != workspace_cache_.end()) return it->second;
    bool in = isUnderRoot(std::filesystem::absolute(file).lexically_normal().string(), root_);
    workspace_cache_.emplace(file, in);
    return in;
  }

  // Returns the function and the lambdas defined in it.
  std::vector<FunctionInfo> buildFunction(CXCursor c, const std::string& file) {
    FnCtx ctx;
    ctx.fn.key = functionKeyOf(c);
    ctx.fn.mangled = mangledOf(c);
    ctx.fn.name = spelling(c);
    ctx.fn.file = file;
    ctx.fn.range = toRange(clang_getCursorExtent(c));
    ctx.fn.name_range = toRange(clang_Cursor_getSpellingNameRange(c, 0, 0));
    Node root;
    root.kind = NodeKind::Function;
    root.range = ctx.fn.range;
    root.hint = ctx.fn.name_range.end;
    ctx.fn.nodes.push_back(root);
    ctx.fn.body_hash = tokenHash(clang_getCursorExtent(c));
    std::vector<FunctionInfo> lambdas;
    for (CXCursor child : children(c)) {
      if (child.kind == CXCursor_ParmDecl) continue;  // default arguments: the caller's cost
      walk(child, ctx, 0, 0, lambdas);
    }
    std::vector<FunctionInfo> out;
    out.push_back(std::move(ctx.fn));
    for (auto& l : lambdas) out.push_back(std::move(l));
    return out;
  }

  // The member function definitions of a class declared inside a function, its nested classes'
  // and its implicit members.
  void buildClassMembers(CXCursor cls, const std::string& file, std::vector<FunctionInfo>& out) {
    for (CXCursor m : children(cls)) {
      if (isClassKind(m.kind)) {
        buildClassMembers(m, file, out);
      } else if (isFunctionKind(m.kind) && clang_isCursorDefinition(m)) {
        for (auto& f : buildFunction(m, file)) out.push_back(std::move(f));
      }
    }
    implicitMembers(cls, file, out);
  }

  void implicitMembers(CXCursor cls, const std::string& file, std::vector<FunctionInfo>& out) {
    if (!clang_isCursorDefinition(cls) || clang_Cursor_isAnonymous(cls)) return;
    std::string qualified = scopePrefix(cls) + toString(clang_getCursorDisplayName(cls));
    for (auto& f : implicitSpecialMembers(cls, qualified, file, toRange(clang_getCursorExtent(cls)),
                                          toRange(clang_Cursor_getSpellingNameRange(cls, 0, 0))))
      out.push_back(std::move(f));
  }

  void buildLambda(CXCursor c, FnCtx& outer, std::vector<FunctionInfo>& lambdas) {
    FnCtx ctx;
    ctx.fn.key = outer.fn.key + "::lambda#" + std::to_string(++outer.lambda_counter);
    ctx.fn.name = "lambda";
    ctx.fn.file = outer.fn.file;
    ctx.fn.range = toRange(clang_getCursorExtent(c));
    ctx.fn.name_range = Range{ctx.fn.range.start, ctx.fn.range.start};
    ++ctx.fn.name_range.end.column;
    ctx.fn.body_hash = tokenHash(clang_getCursorExtent(c));
    Node root;
    root.range = ctx.fn.range;
    root.hint = ctx.fn.range.start;
    ctx.fn.nodes.push_back(root);
    std::vector<FunctionInfo> nested;
    for (CXCursor child : children(c)) {
      if (child.kind == CXCursor_ParmDecl) continue;
      walk(child, ctx, 0, 0, nested);
    }
    lambdas.push_back(std::move(ctx.fn));
    for (auto& l : nested) lambdas.push_back(std::move(l));
  }

  int addNode(FnCtx& ctx, Node n, int parent, int arm) {
    n.id = static_cast<int>(ctx.fn.nodes.size());
    n.parent = parent;
    n.arm = arm;
    ctx.fn.nodes.push_back(std::move(n));
    ctx.fn.nodes[parent].children.push_back(ctx.fn.nodes.back().id);
    return ctx.fn.nodes.back().id;
  }

  // Kinds that become nodes or start a function of their own: walk() handles them.
  static bool isStructural(CXCursorKind k) {
    return k == CXCursor_LambdaExpr || k == CXCursor_CallExpr || k == CXCursor_ForStmt ||
           k == CXCursor_WhileStmt || k == CXCursor_DoStmt || k == CXCursor_CXXForRangeStmt ||
           k == CXCursor_IfStmt || k == CXCursor_SwitchStmt || k == CXCursor_ConditionalOperator ||
           k == CXCursor_ClassDecl || k == CXCursor_StructDecl || k == CXCursor_UnionDecl ||
           k == CXCursor_ClassTemplate;
  }

  // Leaves and references cannot contain calls: not descending into them saves visits.
  static bool isLeaf(CXCursorKind k) {
    switch (k) {
      case CXCursor_IntegerLiteral:
      case CXCursor_FloatingLiteral:
      case CXCursor_StringLiteral:
      case CXCursor_CharacterLiteral:
      case CXCursor_CXXBoolLiteralExpr:
      case CXCursor_CXXNullPtrLiteralExpr:
      case CXCursor_TypeRef:
      case CXCursor_TemplateRef:
      case CXCursor_NamespaceRef:
      case CXCursor_MemberRef:
      case CXCursor_OverloadedDeclRef:
      case CXCursor_LabelRef:
      case CXCursor_VariableRef:
      case CXCursor_DeclRefExpr:
      case CXCursor_BreakStmt:
      case CXCursor_ContinueStmt:
      case CXCursor_NullStmt:
      case CXCursor_GotoStmt:
        return true;
      default:
        return false;
    }
  }

  struct Descent {
    Builder* self;
    FnCtx* ctx;
    int parent;
    int arm;
    std::vector<FunctionInfo>* lambdas;
  };

  // Everything below `c` that is not structural keeps the same parent node and arm, so one
  // recursive libclang visit covers it, handing structural cursors to walk(). (One
  // clang_visitChildren per cursor was the dominant analysis cost: analysis_benchmark.cc.)
  void walkChildren(CXCursor c, FnCtx& ctx, int parent, int arm,
                    std::vector<FunctionInfo>& lambdas) {
    Descent d{this, &ctx, parent, arm, &lambdas};
    clang_visitChildren(
        c,
        [](CXCursor child, CXCursor, CXClientData data) {
          auto* d = static_cast<Descent*>(data);
          if (isStructural(child.kind)) {
            d->ctx->guard = -1;
            const int first = static_cast<int>(d->ctx->fn.nodes.size());
            d->self->walk(child, *d->ctx, d->parent, d->arm, *d->lambdas);
            // `child` was a `continue` guard: what follows it in this block is its "not taken"
            // arm. (Only `child` itself, the first node its walk added, not a guard below it.)
            if (d->ctx->guard >= 0 && d->ctx->guard == first) {
              d->parent = d->ctx->guard;
              d->arm = 1;
              d->ctx->guard = -1;
            }
            return CXChildVisit_Continue;
          }
          return isLeaf(child.kind) ? CXChildVisit_Continue : CXChildVisit_Recurse;
        },
        &d);
  }

  // Every structural descent passes here, so this counts the nesting the walk recurses through
  // (else-if chains, nested ifs, ternary chains, lambdas). Past the limit the rest of the
  // subtree is not analysed, and says so (truncated()).
  void walk(CXCursor c, FnCtx& ctx, int parent, int arm, std::vector<FunctionInfo>& lambdas) {
    if (depth_ >= options_.max_nesting_depth) {
      truncated(c, ctx);
      return;
    }
    ++depth_;
    walkAt(c, ctx, parent, arm, lambdas);
    --depth_;
  }

  // A visible outcome, once per function: a warning at the first cursor not analysed, and the
  // function counts as having calls we could not see (its total is not presented as complete).
  void truncated(CXCursor c, FnCtx& ctx) {
    if (ctx.truncated) return;
    ctx.truncated = true;
    ++ctx.fn.unresolved_calls;
    ParseProblem p;
    p.range = toRange(clang_getCursorExtent(c));
    p.range.end = p.range.start;
    ++p.range.end.column;
    p.message = "analysis truncated at nesting depth " +
                std::to_string(options_.max_nesting_depth) + " in " + ctx.fn.name +
                ": code nested deeper has no hints and its cost is unknown";
    p.error = false;
    out_.problems.push_back(std::move(p));
  }

  void walkAt(CXCursor c, FnCtx& ctx, int parent, int arm, std::vector<FunctionInfo>& lambdas) {
    switch (c.kind) {
      case CXCursor_LambdaExpr:
        buildLambda(c, ctx, lambdas);
        return;
      case CXCursor_ClassDecl:
      case CXCursor_StructDecl:
      case CXCursor_UnionDecl:
      case CXCursor_ClassTemplate:
        // A class declared inside the function: its members are functions of their own (keyed
        // under the enclosing function's key), not part of this body's cost.
        buildClassMembers(c, ctx.fn.file, lambdas);
        return;
      case CXCursor_CallExpr:
        walkCall(c, ctx, parent, arm, lambdas);
        return;
      case CXCursor_ForStmt:
      case CXCursor_WhileStmt:
      case CXCursor_DoStmt:
      case CXCursor_CXXForRangeStmt:
        walkLoop(c, ctx, parent, arm, lambdas);
        return;
      case CXCursor_IfStmt:
      case CXCursor_SwitchStmt:
      case CXCursor_ConditionalOperator:
        walkBranch(c, ctx, parent, arm, lambdas);
        return;
      default:
        if (!isLeaf(c.kind)) walkChildren(c, ctx, parent, arm, lambdas);
    }
  }

  struct CalleeInfo {
    CXCursor cursor;
    std::string key;
    std::string mangled;
    bool in_workspace = false;
    bool maybe_constexpr = true;  // declared constexpr/consteval, or not known
  };

  // Key, mangling and definition lookup of a referenced function, computed once per function
  // per TU: a file calls the same few functions many times, and clang_Cursor_getMangling
  // builds a mangling context on every call.
  const CalleeInfo& callee(CXCursor ref) {
    auto& bucket = callee_cache_[clang_hashCursor(ref)];
    for (const auto& info : bucket)
      if (clang_equalCursors(info.cursor, ref)) return info;
    bucket.push_back(CalleeInfo{ref, functionKeyOf(ref), mangledOf(ref), hasWorkspaceBody(ref),
                                declaredConstexpr(ref)});
    return bucket.back();
  }

  // `Base::f()`, `obj.Base::f()` name their function: no virtual dispatch. The member reference
  // then has the qualifier as a type or namespace reference among its children.
  static bool qualifiedCall(CXCursor call) {
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

  // Whether the declaration's tokens before its name hold `constexpr` or `consteval` (every
  // declaration of such a function must say so). Only those calls can be folded, and asking
  // libclang to evaluate every call cost ~15 % of the analysis. Unknown (no tokens, e.g. a
  // declaration made by a macro) counts as maybe.
  bool declaredConstexpr(CXCursor ref) {
    CXSourceRange head = clang_getRange(clang_getRangeStart(clang_getCursorExtent(ref)),
                                        clang_getCursorLocation(ref));
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

  void walkCall(CXCursor c, FnCtx& ctx, int parent, int arm, std::vector<FunctionInfo>& lambdas) {
    CXCursor ref = clang_getCursorReferenced(c);
    // Constructions, conversions and calls through pointers are not calls as written (trap 4).
    bool is_call = !clang_Cursor_isNull(ref) &&
                   (ref.kind == CXCursor_FunctionDecl || ref.kind == CXCursor_CXXMethod ||
                    ref.kind == CXCursor_FunctionTemplate);
    if (!is_call && (clang_Cursor_isNull(ref) || !isConstruction(ref))) ++ctx.fn.unresolved_calls;
    if (is_call && !writtenInSource(c, ref)) is_call = false;
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
      n.callee_key = info.key;
      n.callee_mangled = info.mangled;
      n.callee_name = spelling(c);
      if (n.callee_name.empty()) n.callee_name = spelling(ref);
      n.callee_in_workspace = info.in_workspace;
      n.callee_system = clang_Location_isInSystemHeader(clang_getCursorLocation(ref)) != 0;
      if (ref.kind == CXCursor_CXXMethod) n.receiver_var = receiverVar(c);
      if (ref.kind == CXCursor_CXXMethod && isInsertion(spelling(ref)))
        n.fills_var = n.receiver_var;
      n.callee_virtual =
          ref.kind == CXCursor_CXXMethod && clang_CXXMethod_isVirtual(ref) && !qualifiedCall(c);
      addNode(ctx, std::move(n), parent, arm);
    }
    walkChildren(c, ctx, parent, arm, lambdas);  // argument calls are siblings, not children
  }

  // Members that add an element to the container they are called on.
  static bool isInsertion(const std::string& name) {
    static const std::set<std::string, std::less<>> kNames = {
        "insert",    "emplace",    "emplace_back", "emplace_front", "emplace_hint",
        "push_back", "push_front", "push",         "try_emplace",   "insert_or_assign"};
    return kNames.count(name) > 0;
  }

  // The function-local variable an expression names (through conversions and parentheses), as
  // its USR; "" when it names anything else.
  static std::string localVar(CXCursor e) {
    e = stripConversions(e);
    if (e.kind != CXCursor_DeclRefExpr) return {};
    CXCursor var = clang_getCursorReferenced(e);
    if (var.kind != CXCursor_VarDecl) return {};
    const CXCursorKind owner = clang_getCursorSemanticParent(var).kind;
    if (!isFunctionKind(owner) && owner != CXCursor_LambdaExpr) return {};
    return toString(clang_getCursorUSR(var));
  }

  // `ids.insert(x)`: the local variable the member is called on.
  static std::string receiverVar(CXCursor call) {
    std::vector<CXCursor> k = children(call);
    if (k.empty() || k[0].kind != CXCursor_MemberRefExpr) return {};
    std::vector<CXCursor> object = children(k[0]);
    return object.empty() ? std::string() : localVar(object[0]);
  }

  // Asking libclang to evaluate costs ~10 k instructions per call, and in C++20 most standard
  // library members are constexpr, so calls are first screened by what they read: a constant
  // expression cannot read a parameter, a variable whose type is not const, or the object of a
  // member function (`this`, explicit or implicit). Such a call is never folded.
  static bool readsRuntimeState(CXCursor call) {
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

  static bool isCompileTimeConstant(CXCursor call) {
    if (readsRuntimeState(call)) return false;
    CXEvalResult r = clang_Cursor_Evaluate(call);
    if (!r) return false;
    clang_EvalResult_dispose(r);
    return true;
  }

  static bool isConstruction(CXCursor ref) {
    return ref.kind == CXCursor_Constructor || ref.kind == CXCursor_ClassDecl ||
           ref.kind == CXCursor_StructDecl || ref.kind == CXCursor_ClassTemplate ||
           ref.kind == CXCursor_TypedefDecl || ref.kind == CXCursor_TypeAliasDecl ||
           ref.kind == CXCursor_ConversionFunction;
  }

  // Operator calls the compiler inserts (a range-for's `operator*`/`operator!=`/`operator++`,
  // implicit conversions such as `operator bool`) are not calls as written: their extent does
  // not contain the operator's own token (a range-for's `operator*` spans only the `:`).
  bool writtenInSource(CXCursor call, CXCursor ref) {
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

  bool hasWorkspaceBody(CXCursor ref) {
    CXCursor def = clang_getCursorDefinition(ref);
    if (clang_Cursor_isNull(def) || clang_isInvalid(def.kind)) return false;
    CXSourceLocation loc = clang_getCursorLocation(def);
    if (clang_Location_isInSystemHeader(loc)) return false;
    std::string file = expansionFile(loc);
    return file == main_file_ || inWorkspace(file);
  }

  // FNV-1a over the spellings of the tokens in `range`, each followed by a separator: layout and
  // comments (not tokens) do not change it, any change to the code does.
  uint64_t tokenHash(CXSourceRange range) {
    CXToken* toks = nullptr;
    unsigned n = 0;
    clang_tokenize(tu_.raw(), range, &toks, &n);
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](unsigned char b) {
      h ^= b;
      h *= 1099511628211ull;
    };
    for (unsigned i = 0; i < n; ++i) {
      if (clang_getTokenKind(toks[i]) == CXToken_Comment) continue;
      CXString sp = clang_getTokenSpelling(tu_.raw(), toks[i]);
      for (const char* p = clang_getCString(sp); p && *p; ++p) mix(static_cast<unsigned char>(*p));
      clang_disposeString(sp);
      mix(0);
    }
    if (toks) clang_disposeTokens(tu_.raw(), toks, n);
    return h;
  }

  std::vector<std::string> tokens(CXSourceRange range) {
    CXToken* toks = nullptr;
    unsigned n = 0;
    clang_tokenize(tu_.raw(), range, &toks, &n);
    std::vector<std::string> out;
    for (unsigned i = 0; i < n; ++i)
      out.push_back(toString(clang_getTokenSpelling(tu_.raw(), toks[i])));
    if (toks) clang_disposeTokens(tu_.raw(), toks, n);
    return out;
  }

  // Offset of the first `;` at paren depth 1 in a for header: children before it are the init.
  Position firstSemicolon(CXCursor loop, CXCursor body) {
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

  // True for a constant-false loop condition. Inside a macro expansion the tokens of the extent
  // are the macro call's, not the `0`, so the condition is also evaluated by libclang.
  static bool isZeroLiteral(CXCursor c, const std::vector<std::string>& toks) {
    if (toks.size() == 1 && (toks[0] == "0" || toks[0] == "false")) return true;
    CXEvalResult r = clang_Cursor_Evaluate(c);
    if (!r) return false;
    bool zero = clang_EvalResult_getKind(r) == CXEval_Int && clang_EvalResult_getAsLongLong(r) == 0;
    clang_EvalResult_dispose(r);
    return zero;
  }

  void walkLoop(CXCursor c, FnCtx& ctx, int parent, int arm, std::vector<FunctionInfo>& lambdas) {
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
    n.loop_kind = c.kind == CXCursor_ForStmt           ? LoopKind::For
                  : c.kind == CXCursor_CXXForRangeStmt ? LoopKind::RangeFor
                  : c.kind == CXCursor_WhileStmt       ? LoopKind::While
                                                       : LoopKind::Do;
    n.range = toRange(clang_getCursorExtent(c));
    n.hint = c.kind == CXCursor_DoStmt
                 ? n.range.end
                 : toPosition(clang_getRangeStart(clang_getCursorExtent(body)));
    n.loop_ordinal = ctx.loop_counter++;
    int line = n.range.start.line;
    // On the loop's line, or alone on the line above (not another statement's comment).
    std::optional<IterationsAnnotation> a;
    if (line < static_cast<int>(lines_.size())) a = parseIterationsAnnotation(lines_[line]);
    if (!a && line > 0 && line - 1 < static_cast<int>(lines_.size())) {
      a = parseIterationsAnnotation(lines_[line - 1]);
      if (a && !a->alone) a.reset();
    }
    if (a) n.annotated_iterations = a->iterations;
    if (c.kind == CXCursor_ForStmt) {
      CXSourceRange header = clang_getRange(clang_getRangeStart(clang_getCursorExtent(c)),
                                            clang_getRangeStart(clang_getCursorExtent(body)));
      n.constant_trip = constantTripCount(tokens(header));
      if (!n.constant_trip) evaluatedTripCount(kids, body, header, n);
    }
    if (c.kind == CXCursor_CXXForRangeStmt) {
      for (size_t i = 0; i + 1 < kids.size(); ++i) {
        if (kids[i].kind == CXCursor_VarDecl) continue;
        CXCursor producer = firstCall(kids[i]);
        // A range over a local variable: the collection it was initialized from is the producer
        // (`auto stories = repo.stories(id); for (auto& s : stories)`); a variable filled by the
        // function itself is bounded by its insertions (inference, DataFlow).
        if (std::string var = localVar(kids[i]); clang_Cursor_isNull(producer) && !var.empty()) {
          n.range_var = var;
          n.range_var_name = spelling(stripConversions(kids[i]));
          producer = firstCall(clang_getCursorReferenced(stripConversions(kids[i])));
        }
        if (!clang_Cursor_isNull(producer)) {
          const CalleeInfo& info = callee(clang_getCursorReferenced(producer));
          n.producer_key = info.key;
          n.producer_mangled = info.mangled;
          break;
        }
        // A range over an array of a size fixed by its type: `int a[8]`, `std::array<T, 8>`.
        if (std::optional<long long> size = fixedArraySize(clang_getCursorType(kids[i]))) {
          n.constant_trip = static_cast<double>(*size);
          n.constant_trip_source = "range over " +
                                   toString(clang_getTypeSpelling(clang_getCursorType(kids[i]))) +
                                   ": " + std::to_string(*size) + " elements";
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

  // The integer value libclang evaluates `e` to (constant expressions only), or nullopt.
  static std::optional<long long> evaluateInt(CXCursor e) {
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
  static std::optional<long long> fixedArraySize(CXType t) {
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

  // `for (int i = 0; i < kCount; ++i)` with a bound (or start) that is a constant expression
  // but not a literal: libclang evaluates it, and the source is kept for the hover.
  void evaluatedTripCount(const std::vector<CXCursor>& kids, CXCursor body, CXSourceRange header,
                          Node& n) {
    std::optional<double> init_value, bound_value;
    std::string bound_text, init_text;
    for (const CXCursor& k : kids) {
      if (clang_equalCursors(k, body)) continue;
      if (k.kind == CXCursor_DeclStmt && !init_value) {
        std::vector<CXCursor> decls = children(k);
        if (decls.size() == 1 && decls[0].kind == CXCursor_VarDecl) {
          std::vector<CXCursor> init = children(decls[0]);
          if (!init.empty()) {
            if (auto v = evaluateInt(init.back())) {
              init_value = static_cast<double>(*v);
              init_text = sourceText(init.back());
            }
          }
        }
      } else if (k.kind == CXCursor_BinaryOperator && !bound_value) {
        std::vector<CXCursor> sides = children(k);
        if (sides.size() == 2) {
          if (auto v = evaluateInt(sides[1])) {
            bound_value = static_cast<double>(*v);
            bound_text = sourceText(sides[1]);
          }
        }
      }
    }
    if (!bound_value && !init_value) return;
    n.constant_trip = constantTripCount(tokens(header), init_value, bound_value);
    if (!n.constant_trip) return;
    std::string src;
    auto note = [&](const std::string& text, std::optional<double> v) {
      if (!v || text.empty() || numberToken(text)) return;
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.0f", *v);
      src += (src.empty() ? "" : ", ") + text + " = " + buf;
    };
    note(init_text, init_value);
    note(bound_text, bound_value);
    n.constant_trip_source = src;
  }

  // The source text of a cursor's extent, tokens joined as written in the usual style
  // (`sizeof(a) / sizeof(a[0])`, `std::size(kNames)`), bounded for the hover.
  std::string sourceText(CXCursor c) {
    static const std::set<std::string> kTight = {"(", ")", "[", "]", "::", ".", "->", ","};
    std::string out, prev;
    for (const std::string& t : tokens(clang_getCursorExtent(c))) {
      if (out.size() > 80) return out + " …";
      const bool tight = out.empty() || kTight.count(t) || prev == "(" || prev == "[" ||
                         prev == "::" || prev == "." || prev == "->" || prev == "," ||
                         (t == "(" && !prev.empty());
      if (!tight) out += ' ';
      out += t;
      if (t == ",") out += ' ';
      prev = t;
    }
    return out;
  }

  // The first call (pre-order) under `c` that references a function, or a null cursor.
  // libclang's visit is iterative: a range-for over a 35,000-term expression is no deeper here.
  static CXCursor firstCall(CXCursor c) {
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

  // True when the text after `pos` (skipping blanks, one `;` and comments) starts with `else`.
  bool elseFollows(Position pos) {
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

  // `continue;` or `{ continue; }`.
  static bool isContinue(CXCursor stmt) {
    if (stmt.kind == CXCursor_ContinueStmt) return true;
    if (stmt.kind != CXCursor_CompoundStmt) return false;
    std::vector<CXCursor> body = children(stmt);
    return body.size() == 1 && body[0].kind == CXCursor_ContinueStmt;
  }

  // ---- Static branch prediction -------------------------------------------------------------
  // Inference uses these priors only because production data has no branch counts, and states
  // them as assumptions. The heuristics are Ball & Larus (PLDI 1993); each gives the probability
  // that the `if` is taken, as LLVM's BranchProbabilityInfo weighs it (pointer and zero/opcode
  // heuristics 20:12) or, where LLVM has none, as Wu & Larus (MICRO 1994) measured it (return 72 %,
  // loop exit 80 % correct). Several matching heuristics are combined as Wu & Larus do
  // (Dempster-Shafer): p·q / (p·q + (1-p)(1-q)). `continue` has no heuristic (it is a jump back
  // into the loop, not an exit), so a `continue` guard is predicted from its condition alone.
  struct Prior {
    double taken = 0.5;
    std::string reason;
    bool any = false;
    void add(double p, const std::string& why) {
      taken = any ? taken * p / (taken * p + (1 - taken) * (1 - p)) : p;
      reason += (any ? " + " : "") + why;
      any = true;
    }
  };
  static constexpr double kLikely = 20.0 / 32;  // LLVM PH/ZH_TAKEN_WEIGHT : _NONTAKEN_WEIGHT

  // Implicit conversions, parentheses and `operator bool` hide the value being tested.
  static CXCursor stripConversions(CXCursor e) {
    for (;;) {
      std::vector<CXCursor> k = children(e);
      const bool conv = e.kind == CXCursor_UnexposedExpr || e.kind == CXCursor_ParenExpr ||
                        ((e.kind == CXCursor_CallExpr || e.kind == CXCursor_MemberRefExpr) &&
                         spelling(e) == "operator bool");
      if (!conv || k.size() != 1) return e;
      e = k[0];
    }
  }

  static CXTypeKind typeKind(CXCursor e) {
    return clang_getCanonicalType(clang_getCursorType(e)).kind;
  }
  static bool isPointerType(CXTypeKind k) {
    return k == CXType_Pointer || k == CXType_MemberPointer || k == CXType_NullPtr ||
           k == CXType_BlockPointer;
  }
  static bool isIntegerType(CXTypeKind k) {
    return (k >= CXType_Char_U && k <= CXType_UInt128 && k != CXType_Bool) ||
           (k >= CXType_Char_S && k <= CXType_Int128);
  }
  static bool isFloatType(CXTypeKind k) { return k >= CXType_Float && k <= CXType_LongDouble; }
  // The integer value of a constant expression (a literal, an enumerator, a constexpr).
  static std::optional<long long> intConstant(CXCursor e) {
    CXEvalResult r = clang_Cursor_Evaluate(e);
    if (!r) return std::nullopt;
    std::optional<long long> v;
    if (clang_EvalResult_getKind(r) == CXEval_Int) v = clang_EvalResult_getAsLongLong(r);
    clang_EvalResult_dispose(r);
    return v;
  }

  // Whether the first token of `c` is `t`, without tokenizing the whole extent.
  bool firstTokenIs(CXCursor c, std::string_view t) {
    CXSourceLocation start = clang_getRangeStart(clang_getCursorExtent(c));
    CXToken* tok = clang_getToken(tu_.raw(), start);
    if (!tok) return false;
    bool is = toString(clang_getTokenSpelling(tu_.raw(), *tok)) == t;
    clang_disposeTokens(tu_.raw(), tok, 1);
    return is;
  }

  // Pointer, zero and opcode heuristics on the condition as written.
  void conditionPrior(CXCursor cond, Prior& out) {
    if (cond.kind == CXCursor_VarDecl) {  // `if (auto* p = find())`: the variable is tested
      const CXTypeKind k = clang_getCanonicalType(clang_getCursorType(cond)).kind;
      if (isPointerType(k) || k == CXType_Record) out.add(kLikely, "pointer heuristic: non-null");
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
      if (inner.any) {
        const bool odd = negations % 2 == 1;
        out.add(odd ? 1 - inner.taken : inner.taken, (odd ? "negated " : "") + inner.reason);
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
                  eq ? "pointer heuristic: p == q unlikely" : "pointer heuristic: p != q likely");
        } else if (isFloatType(lk) || isFloatType(rk)) {
          out.add(eq ? 1 - kLikely : kLikely, "float heuristic: x == y unlikely");
        } else if (intConstant(r) || intConstant(l)) {
          out.add(eq ? 1 - kLikely : kLikely,
                  eq ? "opcode heuristic: x == C unlikely" : "opcode heuristic: x != C likely");
        }
      } else if (isIntegerType(lk) && intConstant(r) == 0) {
        out.add(1 - kLikely, "opcode heuristic: x < 0 unlikely");
      }
      return;
    }
    const CXTypeKind t = typeKind(e);
    if (isPointerType(t)) out.add(kLikely, "pointer heuristic: non-null");
    // A class tested for truth converts through `operator bool`: a smart pointer, an optional,
    // an expected — a null/empty check, as for a raw pointer.
    else if (t == CXType_Record)
      out.add(kLikely, "pointer heuristic: non-empty handle");
    else if (isIntegerType(t))
      out.add(kLikely, "zero heuristic: x != 0 likely");
  }

  // How a statement leaves: 't' throws, 'r' returns, 'b' breaks, 0 falls through (a block as
  // its last statement does).
  static char exitOf(CXCursor stmt) {
    if (stmt.kind == CXCursor_CompoundStmt) {
      std::vector<CXCursor> body = children(stmt);
      return body.empty() ? 0 : exitOf(body.back());
    }
    if (stmt.kind == CXCursor_ReturnStmt) return 'r';
    if (stmt.kind == CXCursor_BreakStmt) return 'b';
    if (stripConversions(stmt).kind == CXCursor_CXXThrowExpr) return 't';
    return 0;
  }
  // Return / loop-exit / error-path heuristics: the arm that leaves is the unlikely one.
  static void exitPrior(char then_exit, char else_exit, Prior& out) {
    if (then_exit == else_exit) return;
    auto unlikely = [](char x) -> std::pair<double, const char*> {
      if (x == 't') return {4.0 / 128, "error heuristic: an arm that throws, 4:124"};
      if (x == 'r') return {0.28, "return heuristic: an arm that returns early, 28 %"};
      if (x == 'b') return {0.20, "loop exit heuristic: an arm that breaks out, 20 %"};
      return {0.5, ""};
    };
    // Rank: throw < break < return < fall through; the lower-ranked arm is the unlikely one.
    auto rank = [](char x) { return x == 't' ? 0 : x == 'b' ? 1 : x == 'r' ? 2 : 3; };
    if (rank(then_exit) < rank(else_exit)) {
      auto [p, why] = unlikely(then_exit);
      out.add(p, why);
    } else {
      auto [p, why] = unlikely(else_exit);
      out.add(1 - p, std::string(why) + " (the else arm)");
    }
  }

  void walkBranch(CXCursor c, FnCtx& ctx, int parent, int arm, std::vector<FunctionInfo>& lambdas) {
    std::vector<CXCursor> kids = children(c);
    if (kids.empty()) return;
    Node n;
    n.kind = NodeKind::Branch;
    n.range = toRange(clang_getCursorExtent(c));
    std::vector<int> arms(kids.size(), -1);
    bool guard = false;
    if (c.kind == CXCursor_IfStmt) {
      n.branch_arms = 2;
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
      n.hint =
          toPosition(clang_getRangeStart(clang_getCursorExtent(kids[has_else ? k - 2 : k - 1])));
      const size_t then_at = has_else ? k - 2 : k - 1;
      Prior prior;
      if (then_at >= 1) conditionPrior(kids[then_at - 1], prior);
      exitPrior(exitOf(kids[then_at]), has_else ? exitOf(kids[k - 1]) : 0, prior);
      if (prior.any) {
        n.branch_prior = prior.taken;
        n.branch_prior_reason = prior.reason;
      }
    } else if (c.kind == CXCursor_ConditionalOperator) {
      n.branch_arms = 2;
      if (kids.size() == 3) {
        arms[1] = 0;
        arms[2] = 1;
        Prior prior;
        conditionPrior(kids[0], prior);
        if (prior.any) {
          n.branch_prior = prior.taken;
          n.branch_prior_reason = prior.reason;
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
      ctx.fn.nodes[id].branch_arms = label + 1 + (has_default ? 0 : 1);
      return;
    }
    for (size_t i = 0; i < kids.size(); ++i) walk(kids[i], ctx, id, arms[i], lambdas);
    if (guard) ctx.guard = id;  // after the walks above, which reset it
  }

  const TranslationUnit& tu_;
  const AnalysisOptions& options_;
  ParsedUnit& out_;
  std::string main_file_;
  std::string root_;
  std::vector<std::string_view> lines_;
  std::unordered_map<std::string, bool> workspace_cache_;
  std::unordered_map<unsigned, std::vector<CalleeInfo>> callee_cache_;
  int depth_ = 0;  // walk() frames on the stack
};

}  // namespace

bool isUnderRoot(const std::string& file, const std::string& root) {
  if (root.empty() || file.empty()) return false;
  std::string r = root;
  if (r.back() != '/') r.push_back('/');
  return file.compare(0, r.size(), r) == 0;
}

std::string functionKeyOf(CXCursor c) {
  if (clang_Cursor_isNull(c)) return "";
  std::string name = spelling(c);
  if (c.kind == CXCursor_FunctionTemplate) {
    name += "<>";
  } else if (int n = clang_Cursor_getNumTemplateArguments(c); n > 0) {
    std::string args;
    for (int i = 0; i < n; ++i) {
      if (i) args += ", ";
      switch (clang_Cursor_getTemplateArgumentKind(c, i)) {
        case CXTemplateArgumentKind_Type:
          args += typeSpelling(clang_Cursor_getTemplateArgumentType(c, i));
          break;
        case CXTemplateArgumentKind_Integral:
          args += std::to_string(clang_Cursor_getTemplateArgumentValue(c, i));
          break;
        default:
          args += "?";
      }
    }
    name += "<" + args + ">";
  }
  std::string params;
  int nargs = clang_Cursor_getNumArguments(c);
  if (nargs >= 0) {
    for (int i = 0; i < nargs; ++i) {
      if (i) params += ", ";
      params +=
          typeSpelling(clang_getCursorType(clang_Cursor_getArgument(c, static_cast<unsigned>(i))));
    }
  } else {
    bool first = true;
    for (CXCursor k : children(c)) {
      if (k.kind != CXCursor_ParmDecl) continue;
      if (!first) params += ", ";
      first = false;
      params += typeSpelling(clang_getCursorType(k));
    }
  }
  CXType ft = clang_getCursorType(c);
  if (ft.kind == CXType_FunctionProto && clang_isFunctionTypeVariadic(ft))
    params += params.empty() ? "..." : ", ...";
  std::string quals = clang_CXXMethod_isConst(c) ? " const" : "";
  return normalizeFunctionKey(scopePrefix(c) + name + "(" + params + ")" + quals);
}

ParsedUnit buildAst(const TranslationUnit& tu, const AnalysisOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  ParsedUnit out;
  out.path = tu.path();
  out.parse_ms = tu.lastParseMs();
  out.problems = tu.problems();
  if (tu.raw()) {
    Builder b(tu, options, out);
    b.visitDecls(clang_getTranslationUnitCursor(tu.raw()));
  }
  std::stable_sort(
      out.functions.begin(), out.functions.end(),
      [](const FunctionInfo& a, const FunctionInfo& b) { return a.range.start < b.range.start; });
  out.build_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

std::vector<std::string> referencedKeys(const ParsedUnit& unit) {
  std::set<std::string> seen;
  std::vector<std::string> out;
  auto add = [&](const std::string& k) {
    if (!k.empty() && seen.insert(k).second) out.push_back(k);
  };
  auto addFunction = [&](const FunctionInfo& f) {
    add(f.key);
    add(f.mangled);
    for (const auto& n : f.nodes) {
      add(n.callee_key);
      add(n.callee_mangled);
      if (n.callee_virtual) add(std::string(kVirtualKeyPrefix) + n.callee_key);
      add(n.producer_key);
      add(n.producer_mangled);
    }
  };
  for (const auto& f : unit.functions) addFunction(f);
  for (const auto& [key, f] : unit.workspace_bodies) addFunction(f);
  return out;
}

}  // namespace perfhat::analysis
