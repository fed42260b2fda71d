// libclang cursors → the simplified AST of DESIGN §6: per function definition, the calls as
// written, loops (for / range-for / while / do) and branches (if / switch / ?:), with stable
// node ids (pre-order, source order), ranges, hint positions, loop ordinals, canonical keys
// (common/function_key.h) and mangled names. No feedback data is attached here.
#pragma once

#include <clang-c/Index.h>

#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/analysis/options.h"
#include "server/analysis/snapshot.h"
#include "server/analysis/translation_unit.h"

namespace perfhat::analysis {

struct ParsedUnit {
  std::string path;
  std::vector<FunctionInfo> functions;  // definitions in the main file (lambdas too), by position
  // Definitions elsewhere in the workspace seen by this TU (headers under the workspace root),
  // by key: bodies the inference can analyse when a callee has no production data.
  std::unordered_map<std::string, FunctionInfo> workspace_bodies;
  std::vector<ParseProblem> problems;  // parse diagnostics of the TU
  double parse_ms = 0;                 // the TU's last parse/reparse
  double build_ms = 0;                 // this AST walk
  // Definitions walked outside the main file (the workspace headers' bodies, lambdas included),
  // and the problems their walk added to `problems`: what a cache of them must restore.
  size_t header_functions_walked = 0;
  std::vector<ParseProblem> header_problems;
  // Per function (parallel to `functions` when a build reused the last walk, else empty): true
  // when it was taken from the last build of the same document at the same place, so it is that
  // build's function as it was (inference_reuse.h reuses its analysis).
  std::vector<bool> same_as_last;
};

// Which definitions buildAst walks: every one the TU sees in the workspace, or the main file's
// only (the caller restores the workspace headers' bodies from a cache of an earlier walk of the
// same headers, server/server/walk_cache.h).
enum class HeaderBodies { kWalk, kSkip };

// The main file's definitions as the last build walked them, for the next build of the same
// document (ast_reuse.cc). A definition is taken from here instead of walked again when its text
// is the same (moved by whole lines at most) and nothing it may depend on changed: the headers
// (BuildReuse::context_same), the main file outside function bodies, and no body that changed
// belongs to a function others may depend on (constexpr, deduced return type).
struct MainBodies {
  struct Walked {
    Position start;                       // where the definition started in that build
    std::vector<FunctionInfo> functions;  // it and its lambdas, as walked
    std::vector<ParseProblem> problems;   // problems its walk added
  };
  bool valid = false;
  uint64_t skeleton = 0;              // hash of the main file with its function bodies left out
  std::set<uint64_t> directive_keys;  // bodies holding a directive (ast_reuse.h)
  using ByText = std::unordered_multimap<uint64_t, Walked>;
  ByText by_text;
  // The implicit special members of the main file's classes (implicit_members.h), by the text
  // key of the class.
  ByText implicit_by_text;
  size_t reused = 0, walked = 0;  // main-file definitions in the last build
  size_t implicit_reused = 0;     // classes whose implicit members the last build took
  // The last build's definitions are not copied into its unit but lent: each entry above whose
  // functions the unit holds, and where they are in its `functions` (after the sort). Until
  // they are given back (server/server/walk_cache.h) those entries' `functions` are empty.
  // Per lent function, beside where it is: its key (what comes back must be what was lent) and
  // its unresolved_calls as walked (the build adds the parse errors inside it, which are not the
  // walk's and may be gone at the next build).
  struct Loan {
    Walked* entry = nullptr;
    std::vector<size_t> at;
    std::vector<std::string> keys;
    std::vector<int> unresolved;
  };
  std::vector<Loan> lent;
};

struct BuildReuse {
  HeaderBodies headers = HeaderBodies::kWalk;
  MainBodies* main = nullptr;  // read and then replaced with this build's walk; null: no reuse
  bool context_same = false;   // the headers are those of the build `main` holds
};

ParsedUnit buildAst(const TranslationUnit& tu, const AnalysisOptions& options,
                    HeaderBodies headers = HeaderBodies::kWalk);
ParsedUnit buildAst(const TranslationUnit& tu, const AnalysisOptions& options,
                    const BuildReuse& reuse);

// Every key and mangled name the analysis of `unit` may look up (functions, callees, range-for
// producers, workspace bodies), deduplicated: the server fetches them in ONE bulk request.
std::vector<std::string> referencedKeys(const ParsedUnit& unit);

// The canonical key of a function declaration cursor (semantic parents + canonical parameter
// types + method const, through normalizeFunctionKey).
std::string functionKeyOf(CXCursor function);

// True when `file` (absolute) lies under `root` (absolute directory); false for an empty root.
bool isUnderRoot(const std::string& file, const std::string& root);

}  // namespace perfhat::analysis
