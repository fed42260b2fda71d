// The walk from libclang cursors to the simplified AST (ast_builder.h's buildAst): one Builder
// per translation unit. Its members are defined by what they build: functions and the walk
// itself (ast_builder.cc), calls (ast_calls.cc), loops and their trip counts (ast_loops.cc),
// branches and their static priors (ast_branches.cc).
#pragma once

#include <clang-c/Index.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "server/analysis/ast_builder.h"
#include "server/analysis/clang_cursor.h"
#include "server/analysis/translation_unit.h"

namespace perfhat::analysis::ast_walk {

struct FnCtx {
  FunctionInfo fn;
  int loop_counter = 0;
  int lambda_counter = 0;
  int guard = -1;          // id of the `continue` guard walkBranch just added, for walkChildren
  bool truncated = false;  // the walk stopped at AnalysisOptions::max_nesting_depth
  // Walking an algorithm's lambda body as a loop of this function (ast_algorithms.cc): its
  // loops have no ordinal, its calls are marked call.via_lambda, and its own lambdas and classes
  // are left to the lambda's function (buildLambda), which is keyed and counted there.
  bool in_algorithm_lambda = false;
};

class Builder {
 public:
  Builder(const TranslationUnit& tu, const AnalysisOptions& options, ParsedUnit& out);
  void visitDecls(CXCursor parent);
  // Walk the main file's definitions only (HeaderBodies::kSkip).
  void skipHeaders(bool skip) { skip_headers_ = skip; }
  // Builds what visitDecls found, taking the main file's unchanged definitions from `reuse`.
  void buildAll(MainBodies* reuse, bool context_same);
  // A definition (or a class's implicit members) visitDecls found.
  struct Event {
    enum Kind { kMainFunction, kHeaderFunction, kImplicit } kind;
    CXCursor cursor;
    std::string file;
  };

 private:
  bool inWorkspace(const std::string& file);
  std::vector<FunctionInfo> buildFunction(CXCursor c, const std::string& file);
  void buildClassMembers(CXCursor cls, const std::string& file, std::vector<FunctionInfo>& out);
  void implicitMembers(CXCursor cls, const std::string& file, std::vector<FunctionInfo>& out);
  void buildLambda(CXCursor c, FnCtx& outer, std::vector<FunctionInfo>& lambdas);
  int addNode(FnCtx& ctx, Node n, int parent, int arm);
  struct Descent {
    Builder* self;
    FnCtx* ctx;
    int parent;
    int arm;
    std::vector<FunctionInfo>* lambdas;
  };
  void walkChildren(CXCursor c, FnCtx& ctx, int parent, int arm,
                    std::vector<FunctionInfo>& lambdas);
  void walk(CXCursor c, FnCtx& ctx, int parent, int arm, std::vector<FunctionInfo>& lambdas);
  void truncated(CXCursor c, FnCtx& ctx);
  void walkAt(CXCursor c, FnCtx& ctx, int parent, int arm, std::vector<FunctionInfo>& lambdas);
  struct CalleeInfo {
    CXCursor cursor;
    std::string key;
    std::string mangled;
    bool in_workspace = false;
    bool maybe_constexpr = true;  // declared constexpr/consteval, or not known
  };
  const CalleeInfo& callee(CXCursor ref);
  bool declaredConstexpr(CXCursor ref);
  void walkCall(CXCursor c, FnCtx& ctx, int parent, int arm, std::vector<FunctionInfo>& lambdas);
  bool writtenInSource(CXCursor call, CXCursor ref);
  // A standard algorithm (`std::accumulate`, `std::transform`, …) called with a lambda: a loop
  // over the algorithm's range whose body is the lambda's (ast_algorithms.cc).
  void walkAlgorithmLambda(CXCursor c, CXCursor ref, FnCtx& ctx, int parent, int arm);
  // The first call under `c` (pre-order) that references a function, or a null cursor.
  static CXCursor firstCallUnder(CXCursor c);
  bool hasWorkspaceBody(CXCursor ref);
  uint64_t tokenHash(CXSourceRange range);
  std::vector<std::string> tokens(CXSourceRange range);
  Position firstSemicolon(CXCursor loop, CXCursor body);
  void walkLoop(CXCursor c, FnCtx& ctx, int parent, int arm, std::vector<FunctionInfo>& lambdas);
  void evaluatedTripCount(const std::vector<CXCursor>& kids, CXCursor body, CXSourceRange header,
                          Node& n);
  // An evaluated start or bound's tokens are kept up to this many bytes (an expression's text is
  // short; the bound keeps a hostile one from growing every summary).
  static constexpr size_t kMaxExpressionText = 4096;
  TripCountSource::Evaluated sourceTokens(CXCursor c, double value);
  bool elseFollows(Position pos);
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
    std::vector<HeuristicMatch> reason;
    bool any = false;
    void add(double p, HeuristicMatch why) {
      taken = any ? taken * p / (taken * p + (1 - taken) * (1 - p)) : p;
      reason.push_back(why);
      any = true;
    }
  };
  static constexpr double kLikely = 20.0 / 32;  // LLVM PH/ZH_TAKEN_WEIGHT : _NONTAKEN_WEIGHT
  bool firstTokenIs(CXCursor c, std::string_view t);
  void conditionPrior(CXCursor cond, Prior& out);
  static void exitPrior(char then_exit, char else_exit, Prior& out);
  void walkBranch(CXCursor c, FnCtx& ctx, int parent, int arm, std::vector<FunctionInfo>& lambdas);
  // `a && b()` / `a || b()`: the right operand is an arm (ast_short_circuit.cc).
  char shortCircuitOperator(CXCursor c);
  bool isShortCircuitWithCall(CXCursor c);
  void walkShortCircuit(CXCursor c, FnCtx& ctx, int parent, int arm,
                        std::vector<FunctionInfo>& lambdas);
  const TranslationUnit& tu_;
  const AnalysisOptions& options_;
  ParsedUnit& out_;
  std::string main_file_;
  std::string root_;
  bool skip_headers_ = false;
  std::vector<Event> events_;
  std::vector<std::string_view> lines_;
  std::unordered_map<std::string, bool> workspace_cache_;
  std::unordered_map<unsigned, std::vector<CalleeInfo>> callee_cache_;
  int depth_ = 0;  // walk() frames on the stack
};

}  // namespace perfhat::analysis::ast_walk
