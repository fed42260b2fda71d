#include "server/server/walk_cache.h"

#include "server/server/thread_cpu.h"

namespace perfhat::server {

std::optional<uint64_t> WalkCache::contextKey(const analysis::TranslationUnit& tu,
                                              const std::string& workspace_root) {
  return HeaderContext::scanKey(tu, workspace_root);
}

analysis::ParsedUnit WalkCache::build(const analysis::TranslationUnit& tu,
                                      const analysis::AnalysisOptions& options) {
  analysis::ParsedUnit unit = lend(tu, options);
  analysis::ParsedUnit copy = unit;
  giveBack(std::move(unit));
  return copy;
}

void WalkCache::drop() noexcept {
  main_ = analysis::MainBodies{};
  walked_in_workspace_.clear();
}

void WalkCache::giveBack(analysis::ParsedUnit&& unit) noexcept {
  for (const analysis::MainBodies::Loan& loan : main_.lent)
    for (size_t i = 0; i < loan.at.size(); ++i)
      if (loan.at[i] >= unit.functions.size() || unit.functions[loan.at[i]].key != loan.keys[i])
        return drop();  // not the unit lent: walk the main file again
  restoreWalkedMarks(unit.functions);
  try {
    for (analysis::MainBodies::Loan& loan : main_.lent) {
      loan.entry->functions.reserve(loan.at.size());
      for (size_t i = 0; i < loan.at.size(); ++i) {
        analysis::FunctionInfo& f = unit.functions[loan.at[i]];
        f.unresolved_calls = loan.unresolved[i];
        loan.entry->functions.push_back(std::move(f));
      }
    }
  } catch (...) {   // bad_alloc
    return drop();  // some entries would stay empty
  }
  main_.lent.clear();
  walked_in_workspace_.clear();
}

void WalkCache::restoreWalkedMarks(std::vector<analysis::FunctionInfo>& functions) const {
  size_t flag = 0;
  for (analysis::FunctionInfo& f : functions)
    for (analysis::Node& n : f.nodes)
      if (flag < walked_in_workspace_.size()) n.call.in_workspace = walked_in_workspace_[flag++];
}

std::vector<analysis::FunctionInfo> WalkCache::walkedFunctions(
    const analysis::ParsedUnit& unit) const {
  std::vector<analysis::FunctionInfo> functions = unit.functions;
  restoreWalkedMarks(functions);
  return functions;
}

analysis::ParsedUnit WalkCache::lend(const analysis::TranslationUnit& tu,
                                     const analysis::AnalysisOptions& options) {
  // The last unit was not given back: the entries it holds are empty.
  if (!main_.lent.empty()) drop();
  const double t0 = threadCpuMs();
  std::optional<uint64_t> key = context_.key(tu, options.workspace_root, key_);
  last_ = LastBuild{};
  last_.key_ms = threadCpuMs() - t0;
  last_.inclusions_scanned = context_.scanned();
  const bool same = key && key_ == key;
  analysis::BuildReuse reuse{same ? analysis::HeaderBodies::kSkip : analysis::HeaderBodies::kWalk,
                             &main_, same};
  analysis::ParsedUnit unit = analysis::buildAst(tu, options, reuse);
  last_.main_reused = main_.reused;
  last_.main_walked = main_.walked;
  last_.main_implicit_reused = main_.implicit_reused;
  walked_in_workspace_.clear();
  for (const analysis::FunctionInfo& f : unit.functions)
    for (const analysis::Node& n : f.nodes) walked_in_workspace_.push_back(n.call.in_workspace);
  if (same) {
    unit.workspace_bodies = bodies_;
    unit.problems.insert(unit.problems.end(), problems_.begin(), problems_.end());
    unit.header_problems = problems_;
    last_.reused = true;
    last_.header_bodies = unit.workspace_bodies.size();
    return unit;
  }
  key_ = key;
  bodies_ = unit.workspace_bodies;
  problems_ = unit.header_problems;
  last_.header_walked = unit.header_functions_walked;
  last_.header_bodies = unit.workspace_bodies.size();
  return unit;
}

}  // namespace perfhat::server
