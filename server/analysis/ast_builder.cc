#include "server/analysis/ast_builder.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <filesystem>
#include <numeric>
#include <string_view>
#include <unordered_set>

#include "common/callees_key.h"
#include "common/function_key.h"
#include "server/analysis/ast_reuse.h"
#include "server/analysis/ast_walker.h"
#include "server/analysis/implicit_members.h"

namespace perfhat::analysis::ast_walk {

Builder::Builder(const TranslationUnit& tu, const AnalysisOptions& options, ParsedUnit& out)
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

void Builder::visitDecls(CXCursor parent) {
  for (CXCursor c : children(parent)) {
    CXSourceLocation loc = clang_getCursorLocation(c);
    if (clang_Location_isInSystemHeader(loc)) continue;
    std::string file = expansionFile(loc);
    bool main = file == main_file_;
    if (!main && (skip_headers_ || !inWorkspace(file))) continue;
    if (c.kind == CXCursor_Namespace || c.kind == CXCursor_LinkageSpec ||
        c.kind == CXCursor_UnexposedDecl || isClassKind(c.kind)) {
      visitDecls(c);
      if (main && isClassKind(c.kind)) events_.push_back({Event::kImplicit, c, file});
    } else if (isFunctionKind(c.kind) && clang_isCursorDefinition(c)) {
      events_.push_back({main ? Event::kMainFunction : Event::kHeaderFunction, c, file});
    }
  }
}

// The definitions visitDecls found, built in the order found (so that the output, its problems'
// order included, does not depend on what was reused).
void Builder::buildAll(MainBodies* reuse, bool context_same) {
  MainReuse main(tu_, reuse, context_same, events_, out_.problems);
  for (const Event& ev : events_) {
    if (ev.kind == Event::kImplicit) {
      const size_t first = out_.functions.size();
      const bool taken = main.takeImplicit(ev.cursor, out_.functions);
      if (!taken) {
        implicitMembers(ev.cursor, ev.file, out_.functions);
        main.madeImplicit(out_.functions, first);
      }
      if (reuse) out_.same_as_last.resize(out_.functions.size(), taken && main.lastTakeInPlace());
      continue;
    }
    const size_t problems_before = out_.problems.size();
    const bool is_main = ev.kind == Event::kMainFunction;
    std::vector<FunctionInfo> fns;
    const bool taken = is_main && main.take(ev.cursor, fns, out_.problems, out_.functions.size());
    if (!taken) {
      fns = buildFunction(ev.cursor, ev.file);
      if (is_main)
        main.walked(ev.cursor, fns, out_.problems, problems_before, out_.functions.size());
    }
    if (!is_main) {
      out_.header_functions_walked += fns.size();
      out_.header_problems.insert(out_.header_problems.end(),
                                  out_.problems.begin() + problems_before, out_.problems.end());
    }
    for (auto& f : fns) {
      if (is_main) {
        // An error inside the body may hide calls that error recovery dropped.
        for (const ParseProblem& p : out_.problems)
          if (p.error && f.range.contains(p.range.start)) ++f.unresolved_calls;
        out_.functions.push_back(std::move(f));
        if (reuse) out_.same_as_last.push_back(taken && main.lastTakeInPlace());
      } else {
        std::string key = f.key;
        out_.workspace_bodies.emplace(std::move(key), std::move(f));
      }
    }
  }
  main.finish();
}

bool Builder::inWorkspace(const std::string& file) {
  if (root_.empty() || file.empty()) return false;
  auto it = workspace_cache_.find(file);
  if (it != workspace_cache_.end()) return it->second;
  bool in = isUnderRoot(std::filesystem::absolute(file).lexically_normal().string(), root_);
  workspace_cache_.emplace(file, in);
  return in;
}

// Returns the function and the lambdas defined in it.
std::vector<FunctionInfo> Builder::buildFunction(CXCursor c, const std::string& file) {
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
void Builder::buildClassMembers(CXCursor cls, const std::string& file,
                                std::vector<FunctionInfo>& out) {
  for (CXCursor m : children(cls)) {
    if (isClassKind(m.kind)) {
      buildClassMembers(m, file, out);
    } else if (isFunctionKind(m.kind) && clang_isCursorDefinition(m)) {
      for (auto& f : buildFunction(m, file)) out.push_back(std::move(f));
    }
  }
  implicitMembers(cls, file, out);
}

void Builder::implicitMembers(CXCursor cls, const std::string& file,
                              std::vector<FunctionInfo>& out) {
  if (!clang_isCursorDefinition(cls) || clang_Cursor_isAnonymous(cls)) return;
  std::string qualified = scopePrefix(cls) + toString(clang_getCursorDisplayName(cls));
  for (auto& f : implicitSpecialMembers(cls, qualified, file, toRange(clang_getCursorExtent(cls)),
                                        toRange(clang_Cursor_getSpellingNameRange(cls, 0, 0))))
    out.push_back(std::move(f));
}

void Builder::buildLambda(CXCursor c, FnCtx& outer, std::vector<FunctionInfo>& lambdas) {
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

int Builder::addNode(FnCtx& ctx, Node n, int parent, int arm) {
  n.id = static_cast<int>(ctx.fn.nodes.size());
  n.parent = parent;
  n.arm = arm;
  ctx.fn.nodes.push_back(std::move(n));
  ctx.fn.nodes[parent].children.push_back(ctx.fn.nodes.back().id);
  return ctx.fn.nodes.back().id;
}

// Everything below `c` that is not structural keeps the same parent node and arm, so one
// recursive libclang visit covers it, handing structural cursors to walk(). (One
// clang_visitChildren per cursor was the dominant analysis cost: analysis_benchmark.cc.)
void Builder::walkChildren(CXCursor c, FnCtx& ctx, int parent, int arm,
                           std::vector<FunctionInfo>& lambdas) {
  Descent d{this, &ctx, parent, arm, &lambdas};
  clang_visitChildren(
      c,
      [](CXCursor child, CXCursor, CXClientData data) {
        auto* d = static_cast<Descent*>(data);
        if (isStructural(child.kind) || d->self->isShortCircuitWithCall(child)) {
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
void Builder::walk(CXCursor c, FnCtx& ctx, int parent, int arm,
                   std::vector<FunctionInfo>& lambdas) {
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
void Builder::truncated(CXCursor c, FnCtx& ctx) {
  if (ctx.truncated) return;
  ctx.truncated = true;
  ++ctx.fn.unresolved_calls;
  ParseProblem p;
  p.range = toRange(clang_getCursorExtent(c));
  p.range.end = p.range.start;
  ++p.range.end.column;
  p.truncated = ParseProblem::Truncated{options_.max_nesting_depth, ctx.fn.name};
  p.error = false;
  out_.problems.push_back(std::move(p));
}

void Builder::walkAt(CXCursor c, FnCtx& ctx, int parent, int arm,
                     std::vector<FunctionInfo>& lambdas) {
  switch (c.kind) {
    case CXCursor_LambdaExpr:
      if (!ctx.in_algorithm_lambda) buildLambda(c, ctx, lambdas);
      return;
    case CXCursor_ClassDecl:
    case CXCursor_StructDecl:
    case CXCursor_UnionDecl:
    case CXCursor_ClassTemplate:
      // A class declared inside the function: its members are functions of their own (keyed
      // under the enclosing function's key), not part of this body's cost.
      if (!ctx.in_algorithm_lambda) buildClassMembers(c, ctx.fn.file, lambdas);
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
    case CXCursor_BinaryOperator:
      if (isShortCircuitWithCall(c)) return walkShortCircuit(c, ctx, parent, arm, lambdas);
      walkChildren(c, ctx, parent, arm, lambdas);
      return;
    default:
      if (!isLeaf(c.kind)) walkChildren(c, ctx, parent, arm, lambdas);
  }
}

// FNV-1a over the spellings of the tokens in `range`, each followed by a separator: layout and
// comments (not tokens) do not change it, any change to the code does.
uint64_t Builder::tokenHash(CXSourceRange range) {
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

std::vector<std::string> Builder::tokens(CXSourceRange range) {
  CXToken* toks = nullptr;
  unsigned n = 0;
  clang_tokenize(tu_.raw(), range, &toks, &n);
  std::vector<std::string> out;
  // Comments are no code: an edited comment must not read as a changed condition, header or
  // operator (as tokenHash skips them).
  for (unsigned i = 0; i < n; ++i)
    if (clang_getTokenKind(toks[i]) != CXToken_Comment)
      out.push_back(toString(clang_getTokenSpelling(tu_.raw(), toks[i])));
  if (toks) clang_disposeTokens(tu_.raw(), toks, n);
  return out;
}

}  // namespace perfhat::analysis::ast_walk

namespace perfhat::analysis {

using namespace ast_walk;

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

namespace {

// The unit's functions by where they start (stably: a class's implicit members, made after its
// inline members, go before them), and what is parallel to them with them: `same_as_last` and
// where the functions lent by `main` are.
void sortByStart(ParsedUnit& out, MainBodies* main) {
  std::vector<FunctionInfo>& fns = out.functions;
  auto before = [&fns](size_t a, size_t b) { return fns[a].range.start < fns[b].range.start; };
  std::vector<size_t> order(fns.size());
  std::iota(order.begin(), order.end(), size_t{0});
  if (std::is_sorted(order.begin(), order.end(), before)) return;
  std::stable_sort(order.begin(), order.end(), before);
  std::vector<FunctionInfo> sorted;
  sorted.reserve(fns.size());
  std::vector<bool> same;
  std::vector<size_t> where(fns.size());
  for (size_t k = 0; k < order.size(); ++k) {
    sorted.push_back(std::move(fns[order[k]]));
    where[order[k]] = k;
    if (!out.same_as_last.empty()) same.push_back(out.same_as_last[order[k]]);
  }
  fns = std::move(sorted);
  out.same_as_last = std::move(same);
  if (main)
    for (MainBodies::Loan& loan : main->lent)
      for (size_t& at : loan.at) at = where[at];
}

}  // namespace

ParsedUnit buildAst(const TranslationUnit& tu, const AnalysisOptions& options,
                    HeaderBodies headers) {
  return buildAst(tu, options, BuildReuse{headers, nullptr, false});
}

ParsedUnit buildAst(const TranslationUnit& tu, const AnalysisOptions& options,
                    const BuildReuse& reuse) {
  auto t0 = std::chrono::steady_clock::now();
  ParsedUnit out;
  out.path = tu.path();
  out.parse_ms = tu.lastParseMs();
  out.problems = tu.problems();
  if (tu.raw()) {
    Builder b(tu, options, out);
    b.skipHeaders(reuse.headers == HeaderBodies::kSkip);
    b.visitDecls(clang_getTranslationUnitCursor(tu.raw()));
    b.buildAll(reuse.main, reuse.context_same);
  }
  sortByStart(out, reuse.main);
  out.build_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

std::vector<std::string> referencedKeys(const ParsedUnit& unit) {
  // Views of the unit's strings (and of `made`, whose elements do not move): no copy per lookup.
  std::unordered_set<std::string_view> seen;
  std::deque<std::string> made;
  std::vector<std::string> out;
  auto add = [&](std::string_view k) {
    if (!k.empty() && seen.insert(k).second) out.emplace_back(k);
  };
  auto addMade = [&](std::string_view prefix, const std::string& k) {
    add(made.emplace_back(std::string(prefix) + k));
  };
  auto addFunction = [&](const FunctionInfo& f) {
    add(f.key);
    add(f.mangled);
    for (const auto& n : f.nodes) {
      add(n.call.key);
      add(n.call.mangled);
      if (n.call.is_virtual) addMade(kVirtualKeyPrefix, n.call.key);
      if (n.call.indirect) addMade(kCalleesKeyPrefix, f.key);
      add(n.loop.producer_key);
      add(n.loop.producer_mangled);
    }
  };
  for (const auto& f : unit.functions) addFunction(f);
  for (const auto& [key, f] : unit.workspace_bodies) addFunction(f);
  return out;
}

}  // namespace perfhat::analysis
