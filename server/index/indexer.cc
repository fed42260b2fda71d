#include "server/index/indexer.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <unordered_set>

#include "server/analysis/ast_builder.h"
#include "server/analysis/compile_db.h"
#include "server/analysis/translation_unit.h"
#include "server/index/summary_codec.h"

namespace perfhat::index {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void lowerThreadPriority() {
  sched_param sp{};
  sp.sched_priority = 0;
  if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp) == 0) return;
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
}

uint64_t flagsHash(const std::vector<std::string>& args) {
  uint64_t h = contentHash("flags");
  for (const auto& a : args) h = contentHash(a + '\0', h);
  return h;
}

struct InclusionList {
  std::vector<std::string> files;
  std::string root;
};

void collectInclusion(CXFile file, CXSourceLocation* /*stack*/, unsigned depth, CXClientData data) {
  if (depth == 0) return;  // the main file
  auto* list = static_cast<InclusionList*>(data);
  std::string path = analysis::toString(clang_getFileName(file));
  if (path.empty()) return;
  bool workspace =
      list->root.empty() ? path.rfind("/usr/", 0) != 0 : analysis::isUnderRoot(path, list->root);
  if (workspace) list->files.push_back(std::move(path));
}

// The TU's own functions and the workspace bodies they reach, transitively: what a caller in
// another file needs to cost them without this TU's headers.
std::vector<analysis::FunctionInfo> summariesOf(analysis::ParsedUnit& unit) {
  std::vector<analysis::FunctionInfo> out;
  std::unordered_set<std::string> seen;
  std::vector<const analysis::FunctionInfo*> todo;
  for (auto& f : unit.functions) {
    if (f.implicit || !seen.insert(f.key).second) continue;
    out.push_back(f);
    todo.push_back(&f);
  }
  while (!todo.empty()) {
    const analysis::FunctionInfo* f = todo.back();
    todo.pop_back();
    for (const auto& n : f->nodes) {
      if (n.kind != analysis::NodeKind::Call || !n.call.in_workspace) continue;
      auto it = unit.workspace_bodies.find(n.call.key);
      if (it == unit.workspace_bodies.end() || !seen.insert(n.call.key).second) continue;
      out.push_back(it->second);
      todo.push_back(&it->second);
    }
  }
  return out;
}

}  // namespace

std::optional<std::string> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Indexer::Indexer(std::shared_ptr<WorkspaceIndex> index, std::shared_ptr<SummaryStore> store,
                 IndexerOptions options)
    : index_(std::move(index)), store_(std::move(store)), options_(std::move(options)) {}

void Indexer::cancel() { cancelled_ = true; }

void Indexer::foregroundBegin() { foreground_.fetch_add(1); }

void Indexer::foregroundEnd() {
  foreground_ended_ns_.store(Clock::now().time_since_epoch().count());
  int n = foreground_.load();
  while (n > 0 && !foreground_.compare_exchange_weak(n, n - 1)) {
  }
}

// Polls in short sleeps rather than waiting on a condition variable: a condition variable's
// mutex would be shared with the worker that calls foregroundBegin/End.
void Indexer::waitForForeground() {
  constexpr auto kPoll = std::chrono::milliseconds(20);
  while (!cancelled_) {
    if (foreground_.load() > 0) {
      std::this_thread::sleep_for(kPoll);
      continue;
    }
    const Clock::time_point resume =
        Clock::time_point(Clock::duration(foreground_ended_ns_.load())) + options_.foreground_grace;
    const Clock::time_point now = Clock::now();
    if (now >= resume) return;
    std::this_thread::sleep_for(std::min<Clock::duration>(resume - now, kPoll));
  }
}

void Indexer::publish(std::function<void()> work) {
  if (options_.publish)
    options_.publish(std::move(work));
  else
    work();
}

uint64_t Indexer::headerHash(const std::string& path) {
  auto it = header_hashes_.find(path);
  if (it != header_hashes_.end()) return it->second;
  std::optional<std::string> text = readFile(path);
  uint64_t h = text ? contentHash(*text) : 0;  // 0: gone; never equal to a stored hash
  header_hashes_.emplace(path, h);
  return h;
}

FileStamp Indexer::currentStamp(const std::string& /*file*/, const std::string& text,
                                const std::vector<std::string>& args,
                                const std::vector<std::pair<std::string, uint64_t>>& headers) {
  FileStamp s;
  s.content = contentHash(text);
  s.flags = flagsHash(args);
  for (const auto& [h, hash] : headers) s.headers.emplace_back(h, headerHash(h));
  return s;
}

bool Indexer::indexFile(const std::string& file, bool* reused, double* parse_ms) {
  if (reused) *reused = false;
  std::optional<std::string> text = readFile(file);
  if (!text) return false;
  analysis::CompileCommand cc =
      analysis::compileCommandFor(file, options_.database, options_.analysis.fallback_flags);
  if (store_) {
    if (std::optional<FileStamp> stored = store_->stamp(file)) {
      if (currentStamp(file, *text, cc.args, stored->headers) == *stored) {
        publish([idx = index_, file, fns = store_->functions(file)]() mutable {
          idx->setIndexed(file, std::move(fns));
        });
        if (reused) *reused = true;
        return true;
      }
    }
  }
  std::unique_ptr<analysis::TranslationUnit> tu =
      analysis::TranslationUnit::parse(file, *text, cc.args,
                                       analysis::TranslationUnit::Mode::kOneShot)
          .value;
  if (!tu) return false;
  if (parse_ms) *parse_ms = tu->lastParseMs();
  analysis::ParsedUnit unit = analysis::buildAst(*tu, options_.analysis);
  InclusionList inclusions;
  if (!options_.analysis.workspace_root.empty())
    inclusions.root =
        std::filesystem::absolute(options_.analysis.workspace_root).lexically_normal().string();
  clang_getInclusions(tu->raw(), collectInclusion, &inclusions);
  std::sort(inclusions.files.begin(), inclusions.files.end());
  inclusions.files.erase(std::unique(inclusions.files.begin(), inclusions.files.end()),
                         inclusions.files.end());
  FileStamp stamp;
  stamp.content = contentHash(*text);
  stamp.flags = flagsHash(cc.args);
  for (const auto& h : inclusions.files) stamp.headers.emplace_back(h, headerHash(h));
  std::vector<analysis::FunctionInfo> summaries = summariesOf(unit);
  if (store_) store_->put(file, stamp, summaries);
  publish([idx = index_, file, fns = std::move(summaries)]() mutable {
    idx->setIndexed(file, std::move(fns));
  });
  return true;
}

IndexStats Indexer::run(const std::function<void(const IndexProgress&)>& progress) {
  auto t0 = Clock::now();
  if (options_.idle_priority) lowerThreadPriority();
  IndexStats stats;
  header_hashes_.clear();
  std::vector<std::string> files;
  if (!options_.database.empty()) {
    auto db = analysis::cachedCompileDatabase(options_.database);
    files = db->files();
  }
  if (files.size() > options_.max_files) files.resize(options_.max_files);
  stats.files = files.size();
  for (size_t i = 0; i < files.size(); ++i) {
    waitForForeground();
    if (cancelled_) {
      stats.cancelled = true;
      break;
    }
    bool reused = false;
    double parse_ms = 0;
    if (!indexFile(files[i], &reused, &parse_ms))
      ++stats.failed;
    else if (reused)
      ++stats.reused;
    else
      ++stats.parsed;
    stats.parse_ms += parse_ms;
    if (progress)
      publish([progress, p = IndexProgress{i + 1, files.size(), files[i]}] { progress(p); });
  }
  if (!options_.publish) stats.functions = index_->functionCount();
  stats.wall_ms = msSince(t0);
  return stats;
}

}  // namespace perfhat::index
