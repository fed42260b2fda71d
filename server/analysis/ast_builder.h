// libclang cursors → the simplified AST of DESIGN §6: per function definition, the calls as
// written, loops (for / range-for / while / do) and branches (if / switch / ?:), with stable
// node ids (pre-order, source order), ranges, hint positions, loop ordinals, canonical keys
// (common/function_key.h) and mangled names. No feedback data is attached here.
#pragma once

#include <clang-c/Index.h>

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
};

// Which definitions buildAst walks: every one the TU sees in the workspace, or the main file's
// only (the caller restores the workspace headers' bodies from a cache of an earlier walk of the
// same headers, server/server/header_bodies_cache.h).
enum class HeaderBodies { kWalk, kSkip };

ParsedUnit buildAst(const TranslationUnit& tu, const AnalysisOptions& options,
                    HeaderBodies headers = HeaderBodies::kWalk);

// Every key and mangled name the analysis of `unit` may look up (functions, callees, range-for
// producers, workspace bodies), deduplicated: the server fetches them in ONE bulk request.
std::vector<std::string> referencedKeys(const ParsedUnit& unit);

// The canonical key of a function declaration cursor (semantic parents + canonical parameter
// types + method const, through normalizeFunctionKey).
std::string functionKeyOf(CXCursor function);

// True when `file` (absolute) lies under `root` (absolute directory); false for an empty root.
bool isUnderRoot(const std::string& file, const std::string& root);

}  // namespace perfhat::analysis
