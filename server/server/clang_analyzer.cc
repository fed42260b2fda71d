#include "server/server/clang_analyzer.h"

#include <chrono>

#include <nlohmann/json.hpp>

#include "server/analysis/analyze.h"
#include "server/analysis/compile_db.h"

namespace perfhat::server {
namespace {

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : " ") + s;
  return out;
}

}  // namespace

analysis::AnalysisOptions ClangAnalyzer::optionsFrom(const Config& cfg, const std::string& root,
                                                     std::vector<std::string>& warnings) {
  analysis::AnalysisOptions o;
  try {
    analysis::from_json(cfg.analysis, o);
  } catch (const std::exception& e) {
    warnings.push_back(std::string("config: analysis: ") + e.what());
    o = analysis::AnalysisOptions();
  }
  if (o.workspace_root.empty()) o.workspace_root = root;
  if (!cfg.compile_commands.empty()) o.compile_commands = cfg.compile_commands;
  return o;
}

void ClangAnalyzer::configure(const Config& cfg, const std::string& root) {
  config_warnings_.clear();
  analysis::AnalysisOptions o = optionsFrom(cfg, root, config_warnings_);
  // Different flags or rules: rebuild every TU from scratch at its next analysis.
  if (!(o == options_)) tus_.clear();
  options_ = std::move(o);
}

analysis::SnapshotPtr ClangAnalyzer::analyze(const AnalysisInput& in, const FeedbackFetch& fetch,
                                             std::vector<std::string>& warnings) {
  warnings.insert(warnings.end(), config_warnings_.begin(), config_warnings_.end());
  config_warnings_.clear();
  analysis::CompileCommand cc =
      analysis::compileCommandFor(in.path, options_.compile_commands, options_.fallback_flags);
  if (!cc.error.empty()) warnings.push_back("compile database: " + cc.error);
  if (cc.missing) {
    warnings.push_back("no compile_commands.json covers " + in.path + "; using fallback flags '" +
                       join(options_.fallback_flags) + "'");
  }

  Entry& e = tus_[in.path];
  std::string error;
  if (e.tu && e.args == cc.args) {
    if (!e.tu->reparse(in.text, &error)) e.tu.reset();  // libclang invalidated it: start over
  } else {
    e.tu.reset();
  }
  if (!e.tu) {
    e.tu = analysis::TranslationUnit::parse(in.path, in.text, cc.args, &error);
    e.args = cc.args;
  }
  if (!e.tu) {
    tus_.erase(in.path);
    auto s = std::make_shared<analysis::Snapshot>();
    s->path = in.path;
    s->version = in.version;
    s->problems.push_back({{{0, 0}, {0, 0}}, "libclang could not parse the file: " + error, true});
    return s;
  }

  analysis::ParsedUnit unit = analysis::buildAst(*e.tu, options_);
  auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<const analysis::FeedbackView> view = fetch(analysis::referencedKeys(unit));
  double fetch_ms = msSince(t0);
  analysis::SnapshotPtr result = analysis::analyze(unit, *view, options_, in.version);
  auto snap = std::make_shared<analysis::Snapshot>(*result);
  snap->fetch_ms = fetch_ms;
  return snap;
}

}  // namespace perfhat::server
