#include "server/server/walk_cache.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/fnv1a.h"
#include "server/server/thread_cpu.h"

namespace perfhat::server {
namespace {

using Hasher = Fnv1a;

struct Inclusions {
  const analysis::TranslationUnit* tu;
  std::string root;  // with a trailing '/'; empty when there is no workspace root
  Hasher* hash;
  unsigned main_offset = 0;  // end of the main file's last #include directive seen
  bool failed = false;
};

std::string fileName(CXFile f) { return analysis::toString(clang_getFileName(f)); }

void visitInclusion(CXFile included, CXSourceLocation* stack, unsigned depth, CXClientData data) {
  auto* in = static_cast<Inclusions*>(data);
  const std::string name = fileName(included);
  if (depth == 0) return;  // the main file itself
  in->hash->text(name);
  // Where the main file includes it (the bottom of the stack is in the main file).
  CXFile at = nullptr;
  unsigned offset = 0;
  clang_getSpellingLocation(stack[depth - 1], &at, nullptr, nullptr, &offset);
  if (at && fileName(at) == in->tu->path()) in->main_offset = std::max(in->main_offset, offset);
  // The walk's own test of a workspace file (Builder::inWorkspace), relative names included.
  if (analysis::isUnderRoot(std::filesystem::absolute(name).lexically_normal().string(),
                            in->root)) {
    size_t size = 0;
    const char* contents = clang_getFileContents(in->tu->raw(), included, &size);
    if (contents) {
      in->hash->bytes(contents, size);
    } else {
      std::ifstream f(name, std::ios::binary);
      if (!f) {
        in->failed = true;
        return;
      }
      std::string s((std::istreambuf_iterator<char>(f)), {});
      in->hash->bytes(s.data(), s.size());
    }
  } else {
    in->hash->number(static_cast<uint64_t>(clang_getFileTime(included)));
  }
}

}  // namespace

std::optional<uint64_t> WalkCache::contextKey(const analysis::TranslationUnit& tu,
                                              const std::string& workspace_root) {
  if (!tu.raw()) return std::nullopt;
  Hasher h;
  for (const std::string& a : tu.args()) h.text(a);
  Inclusions in{&tu, "", &h};
  if (!workspace_root.empty()) {
    in.root = std::filesystem::absolute(workspace_root).lexically_normal().string();
    if (in.root.back() != '/') in.root.push_back('/');
  }
  clang_getInclusions(tu.raw(), visitInclusion, &in);
  if (in.failed) return std::nullopt;
  // The main file up to the end of the line of its last #include.
  std::string_view text = tu.contents();
  size_t end = text.find('\n', std::min<size_t>(in.main_offset, text.size()));
  h.text(text.substr(0, end == std::string_view::npos ? text.size() : end));
  return h.h;
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
  size_t flag = 0;
  for (analysis::FunctionInfo& f : unit.functions)
    for (analysis::Node& n : f.nodes)
      if (flag < walked_in_workspace_.size()) n.call.in_workspace = walked_in_workspace_[flag++];
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

analysis::ParsedUnit WalkCache::lend(const analysis::TranslationUnit& tu,
                                     const analysis::AnalysisOptions& options) {
  // The last unit was not given back: the entries it holds are empty.
  if (!main_.lent.empty()) drop();
  const double t0 = threadCpuMs();
  std::optional<uint64_t> key = contextKey(tu, options.workspace_root);
  last_ = LastBuild{};
  last_.key_ms = threadCpuMs() - t0;
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
