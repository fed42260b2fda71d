#include "server/analysis/testing/test_tu.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace perfhat::analysis::testing {
namespace fs = std::filesystem;

TestTU::Built::~Built() {
  tu.reset();
  std::error_code ec;
  if (!dir.empty()) fs::remove_all(dir, ec);
}

std::unique_ptr<TestTU::Built> TestTU::build() const {
  auto built = std::make_unique<Built>();
  std::string tmpl = (fs::temp_directory_path() / "perfhat-testtu-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  built->dir = tmpl;
  for (const auto& [rel, text] : headers) {
    fs::path p = fs::path(built->dir) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string path = (fs::path(built->dir) / filename).string();
  std::vector<std::string> args = {"-std=c++20", "-xc++", "-I" + built->dir};
  for (const auto& a : extra_args) args.push_back(a);
#ifdef PERFHAT_CLANG_RESOURCE_DIR
  args.push_back("-resource-dir");
  args.push_back(PERFHAT_CLANG_RESOURCE_DIR);
#endif
  auto tu = TranslationUnit::parse(path, code, args);
  if (!tu) throw std::runtime_error(tu.error);
  built->tu = std::move(tu.value);
  AnalysisOptions opts = options;
  if (opts.workspace_root.empty()) opts.workspace_root = built->dir;
  built->unit = buildAst(*built->tu, opts);
  return built;
}

SnapshotPtr TestTU::analyze(const FeedbackView& feedback) const {
  auto built = build();
  AnalysisOptions opts = options;
  if (opts.workspace_root.empty()) opts.workspace_root = built->dir;
  return perfhat::analysis::analyze(built->unit, feedback, opts);
}

const FunctionInfo* findFunction(const Snapshot& s, const std::string& key) {
  for (const auto& f : s.functions)
    if (f.key == key) return &f;
  return nullptr;
}

const FunctionInfo* findFunction(const ParsedUnit& u, const std::string& key) {
  for (const auto& f : u.functions)
    if (f.key == key) return &f;
  return nullptr;
}

std::vector<std::string> keysOf(const ParsedUnit& u) {
  std::vector<std::string> keys;
  for (const auto& f : u.functions)
    if (!f.implicit) keys.push_back(f.key);  // implicit_members_test.cc
  return keys;
}

std::vector<const Node*> nodesOfKind(const FunctionInfo& f, NodeKind kind) {
  std::vector<const Node*> out;
  for (const auto& n : f.nodes)
    if (n.kind == kind) out.push_back(&n);
  return out;
}

const Node* firstCall(const FunctionInfo& f) {
  for (const auto& n : f.nodes)
    if (n.kind == NodeKind::Call) return &n;
  return nullptr;
}

FeedbackItem ranFrom(const std::string& key, double mean_ns, uint64_t count,
                     const std::string& caller) {
  FeedbackItem it;
  it.key = key;
  Stats s;
  s.count = count;
  s.mean_ns = s.p50_ns = s.p90_ns = s.p99_ns = mean_ns;
  it.stats = s;
  CallSiteStats c;
  c.caller = caller;
  c.count = count;
  c.mean_ns = c.p50_ns = c.p90_ns = c.p99_ns = mean_ns;
  c.calls_per_parent = 1;
  it.callsites.push_back(c);
  return it;
}

FeedbackItem measuredItem(const std::string& key, double p50_ns, double p90_ns, double p99_ns,
                          uint64_t count) {
  FeedbackItem it;
  it.key = key;
  Stats s;
  s.count = count;
  s.mean_ns = s.p50_ns = p50_ns;
  s.p90_ns = p90_ns;
  s.p99_ns = p99_ns;
  it.stats = s;
  return it;
}

CallSiteStats callSite(const std::string& caller, double mean_ns, double calls_per_parent,
                       double p90_ns) {
  CallSiteStats c;
  c.caller = caller;
  c.count = 1000;
  c.mean_ns = c.p50_ns = mean_ns;
  c.p90_ns = p90_ns;
  c.calls_per_parent = calls_per_parent;
  return c;
}

}  // namespace perfhat::analysis::testing
