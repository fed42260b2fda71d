#include "server/server/clang_analyzer.h"

#include <algorithm>
#include <exception>

#include <chrono>

#include <nlohmann/json.hpp>

#include "server/analysis/analyze.h"
#include "server/analysis/compile_db.h"
#include "server/server/edit_trace.h"
#include "server/server/thread_cpu.h"

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

// The edit trace's note of what the inference reused.
void traceInference(const analysis::InferenceReuse::Last& r) {
  if (!EditTrace::enabled()) return;
  EditTrace::note("inferred " + std::to_string(r.analysed) + " reused " + std::to_string(r.reused) +
                  (r.all_analysed_because == analysis::NoReuse::None
                       ? ""
                       : " because " + std::string(noReuseText(r.all_analysed_because))));
}

// While a document is analysed: the file being edited comes first, the background indexer
// waits between its files.
struct Foreground {
  IndexSession* s;
  explicit Foreground(IndexSession* session) : s(session) {
    if (s) s->indexer().foregroundBegin();
  }
  ~Foreground() {
    if (s) s->indexer().foregroundEnd();
  }
  Foreground(const Foreground&) = delete;
  Foreground& operator=(const Foreground&) = delete;
};

}  // namespace

std::string_view noReuseText(analysis::NoReuse why) {
  using analysis::NoReuse;
  switch (why) {
    case NoReuse::None:
      return "";
    case NoReuse::NoEarlierAnalysis:
      return "no earlier analysis";
    case NoReuse::DeployedText:
      return "a deployed text";
    case NoReuse::WalkReusedNothing:
      return "the walk reused nothing";
    case NoReuse::OtherWorkspaceBodies:
      return "other workspace bodies";
    case NoReuse::OtherOptions:
      return "other options";
    case NoReuse::OtherParseProblems:
      return "other parse problems";
    case NoReuse::OtherFeedback:
      return "other feedback";
    case NoReuse::LastReachedDepthLimit:
      return "the last analysis reached the depth limit";
    case NoReuse::LastStoppedPartWay:
      return "the last analysis stopped part-way";
    case NoReuse::UnitReleased:
      return "its translation unit was released";
  }
  return "";
}

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
  if (!(o == options_)) {
    tus_.clear();
    deployed_units_.clear();
  }
  options_ = std::move(o);
  max_parsed_ = static_cast<size_t>(std::max(1, cfg.max_parsed_documents));
  // Freed on the parse thread, where libclang allocated them (as in analyze()); only when there
  // is something to free, so that parseThreadRuns() still counts parses.
  if (parsedDocuments() > max_parsed_) parse_thread_.run([this] { releaseIdleUnits(""); });
  startIndex(cfg, root);
}

analysis::SnapshotPtr ClangAnalyzer::analyze(const AnalysisInput& in, const FeedbackFetch& fetch,
                                             std::vector<std::string>& warnings) {
  warnings.insert(warnings.end(), config_warnings_.begin(), config_warnings_.end());
  config_warnings_.clear();
  const Foreground foreground(index_session_.get());
  analysis::CompileCommand cc =
      analysis::compileCommandFor(in.path, options_.compile_commands, options_.fallback_flags);
  if (!cc.error.empty()) warnings.push_back("compile database: " + cc.error);
  if (cc.missing) {
    warnings.push_back("no compile_commands.json covers " + in.path + "; using fallback flags '" +
                       join(options_.fallback_flags) + "'");
  }

  Entry& e = tus_[in.path];
  std::string error;
  EditTrace::mark("setup");
  const double parse_cpu0 = threadCpuMs();
  e.reparsed = false;
  e.last_built = ++build_clock_;
  const double parse_thread_cpu = parse_thread_.run([&] {
    if (e.tu && e.args == cc.args) {
      e.reparsed = e.tu->reparse(in.text).ok();
      if (!e.reparsed) e.tu.reset();  // libclang invalidated it: start over
    } else {
      e.tu.reset();
    }
    if (!e.tu) {
      auto parsed = analysis::TranslationUnit::parse(in.path, in.text, cc.args);
      e.tu = std::move(parsed.value);
      error = std::move(parsed.error);
      e.args = cc.args;
    }
    releaseIdleUnits(in.path);  // freed here, where libclang allocated them
  });
  if (std::string note = parse_thread_.takeFallbackNote(); !note.empty())
    warnings.push_back(std::move(note));
  if (!e.tu) {
    tus_.erase(in.path);
    auto s = std::make_shared<analysis::Snapshot>();
    s->path = in.path;
    s->version = in.version;
    analysis::ParseProblem p;
    p.range = {{0, 0}, {0, 0}};
    p.message = std::move(error);
    p.origin = analysis::ParseProblem::Origin::Parse;
    s->problems.push_back(std::move(p));
    return s;
  }

  // From the walk to the inference, what `e` keeps for the next edit (the walk cache, the index
  // bodies, the inference) must describe one build: a build that stops part-way (a fetch or a
  // deployed text that throws, bad_alloc; Server::rebuild carries on) would leave the inference
  // behind the walk. Then the next build analyses everything.
  struct ForgetOnThrow {
    analysis::InferenceReuse& inference;
    const int exceptions = std::uncaught_exceptions();
    ~ForgetOnThrow() {
      if (std::uncaught_exceptions() > exceptions)
        inference.forget(analysis::NoReuse::LastStoppedPartWay);
    }
  } forget_on_throw{e.inference};
  split_ = Split{};
  split_.parse = e.tu->lastParseMs();
  double cpu = threadCpuMs();
  split_.parse_cpu = cpu - parse_cpu0 + parse_thread_cpu;
  split_.parse_thread_cpu = parse_thread_cpu;
  EditTrace::mark("parse", parse_thread_cpu);
  auto lap = [&cpu] {
    const double now = threadCpuMs(), ms = now - cpu;
    cpu = now;
    return ms;
  };
  analysis::ParsedUnit unit = e.headers.lend(*e.tu, options_);
  struct GiveBack {  // the walk cache's functions, lent to the unit for this build
    WalkCache& cache;
    analysis::ParsedUnit& unit;
    ~GiveBack() { cache.giveBack(std::move(unit)); }
  } give_back{e.headers, unit};
  split_.walk = lap();
  EditTrace::mark("walk");
  // Callees defined in other files, from the workspace index.
  std::vector<std::shared_ptr<const void>> index_bodies;
  index_->augment(unit, 4096, &index_bodies);
  const bool workspace_same = e.headers.last().reused && index_bodies == e.index_bodies;
  e.index_bodies = std::move(index_bodies);
  split_.augment = lap();
  EditTrace::mark("augment");
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> keys = analysis::referencedKeys(unit);
  std::shared_ptr<const analysis::FeedbackView> view = fetch(keys);
  const double first_fetch_ms = msSince(t0);
  const DeployedLookup deployed =
      lookUpDeployed(in, cc.args, e.headers, unit, std::move(keys), fetch, view, warnings);
  split_.fetch = lap();
  EditTrace::mark("fetch");
  std::shared_ptr<analysis::Snapshot> snap =
      e.inference.analyze(unit, *view, options_, in.version, deployed.unit, {workspace_same});
  snap->fetch_ms = first_fetch_ms + deployed.fetch_ms;
  snap->deployed_ms = deployed.ms;
  split_.infer = lap();
  EditTrace::mark("infer");
  traceInference(e.inference.last());
  index_->setOpen(in.path, unit.functions);  // callers in other files see this text now
  markChangedCallees(*snap, *view);
  split_.after = lap();
  EditTrace::mark("index");
  return snap;
}

void ClangAnalyzer::releaseIdleUnits(const std::string& keep) {
  for (size_t held = parsedDocuments(); held > max_parsed_; --held) {
    Entry* idle = nullptr;
    for (auto& [path, entry] : tus_)
      if (entry.tu && path != keep && (!idle || entry.last_built < idle->last_built)) idle = &entry;
    if (!idle) return;
    idle->tu.reset();  // its snapshot stays with the server; the next build parses afresh
    idle->reparsed = false;
    // And infers afresh: its last inference and index bodies are a second copy of its functions
    // and up to 4096 summaries. The walk cache (the headers' bodies) stays.
    idle->inference.forget(analysis::NoReuse::UnitReleased);
    idle->index_bodies = {};
  }
}

size_t ClangAnalyzer::parsedDocuments() const {
  return static_cast<size_t>(std::count_if(tus_.begin(), tus_.end(),
                                           [](const auto& kv) { return kv.second.tu != nullptr; }));
}

ClangAnalyzer::ParseInfo ClangAnalyzer::lastParse(const std::string& path) const {
  auto it = tus_.find(path);
  if (it == tus_.end() || !it->second.tu || !it->second.tu->raw()) return {};
  // A unit with a preamble reads its headers' AST from the preamble's mapped PCH buffers:
  // libclang's resource usage shows them.
  CXTUResourceUsage usage = clang_getCXTUResourceUsage(it->second.tu->raw());
  unsigned long preamble_bytes = 0;
  for (unsigned i = 0; i < usage.numEntries; ++i)
    if (usage.entries[i].kind == CXTUResourceUsage_ExternalASTSource_Membuffer_MMap ||
        usage.entries[i].kind == CXTUResourceUsage_ExternalASTSource_Membuffer_Malloc)
      preamble_bytes += usage.entries[i].amount;
  clang_disposeCXTUResourceUsage(usage);
  return {it->second.reparsed, preamble_bytes > 0};
}

analysis::InferenceReuse::Last ClangAnalyzer::lastInference(const std::string& path) const {
  auto it = tus_.find(path);
  return it == tus_.end() ? analysis::InferenceReuse::Last{} : it->second.inference.last();
}

WalkCache::LastBuild ClangAnalyzer::lastHeaderBodies(const std::string& path) const {
  auto it = tus_.find(path);
  return it == tus_.end() ? WalkCache::LastBuild{} : it->second.headers.last();
}

ClangAnalyzer::DeployedLookup ClangAnalyzer::lookUpDeployed(
    const AnalysisInput& in, const std::vector<std::string>& args, const WalkCache& walk,
    const analysis::ParsedUnit& unit, std::vector<std::string> keys, const FeedbackFetch& fetch,
    std::shared_ptr<const analysis::FeedbackView>& view, std::vector<std::string>& warnings) {
  DeployedLookup out;
  const auto t0 = std::chrono::steady_clock::now();
  const Deployed* d = deployedUnit(in.path, args, in.text, walk, unit, *view, warnings);
  out.ms = msSince(t0);
  if (!d) return out;
  out.unit = {&d->unit, d->revision};
  // Calls the deployed text made and the document no longer makes need their data too.
  const size_t before = keys.size();
  std::vector<std::string> more = analysis::referencedKeys(d->unit);
  keys.insert(keys.end(), more.begin(), more.end());
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  if (keys.size() > before) {
    const auto t1 = std::chrono::steady_clock::now();
    view = fetch(keys);
    out.fetch_ms = msSince(t1);
  }
  return out;
}

const ClangAnalyzer::Deployed* ClangAnalyzer::deployedUnit(
    const std::string& path, const std::vector<std::string>& args, std::string_view document,
    const WalkCache& walk, const analysis::ParsedUnit& unit, const analysis::FeedbackView& view,
    std::vector<std::string>& warnings) {
  if (options_.deployed_revision == "none") return nullptr;
  std::vector<std::string> versions;
  for (const analysis::FunctionInfo& f : unit.functions)
    if (const FeedbackItem* item = view.find(f.key))
      versions.insert(versions.end(), item->versions.begin(), item->versions.end());
  std::sort(versions.begin(), versions.end());
  versions.erase(std::unique(versions.begin(), versions.end()), versions.end());
  if (versions.empty() && options_.deployed_revision.empty()) return nullptr;
  const std::string revision =
      deployed_source_.revisionFor(path, versions, options_.deployed_revision);
  if (revision.empty()) {
    if (!options_.deployed_revision.empty())
      warnings.push_back("analysis.deployed_revision " + options_.deployed_revision +
                         " is not a commit of the repository holding " + path);
    return nullptr;
  }
  auto it = deployed_units_.find(path);
  if (it != deployed_units_.end() && it->second.revision == revision && it->second.args == args)
    return it->second.found ? &it->second : nullptr;
  Deployed& d = deployed_units_[path];
  d = Deployed{revision, args, {}, false};
  const Result<std::string> text = deployed_source_.textAt(path, revision);
  if (!text) return nullptr;  // a file new since that revision: every function is new
  if (text.value == document) {
    // The inference reads only the deployed functions.
    d.unit.path = unit.path;
    d.unit.functions = walk.walkedFunctions(unit);
    d.found = true;
    return &d;
  }
  ++deployed_parses_;
  auto tu = analysis::TranslationUnit::parse(path, text.value, args);
  if (!tu) {
    warnings.push_back("could not parse " + path + " as of " + revision.substr(0, 12) + ": " +
                       tu.error);
    return nullptr;
  }
  d.unit = analysis::buildAst(*tu.value, options_);
  d.found = true;
  return &d;
}

}  // namespace perfhat::server
