// The workspace index's measurements (issue #25, bench/README.md "Workspace index"):
//
//   index_bench index DB ROOT STORE [HEADER]
//     bare libclang parse of every file of DB (no preamble, as the indexer parses), then the
//     index from cold (STORE deleted), then a restart that reads STORE back, the index's memory;
//     with HEADER, a comment is appended to it, the pass re-run (what an edit of a widely
//     included header costs) and the header restored.
//   index_bench edit PERFHAT_LSP DB ROOT FILE N
//     edit → fresh diagnostics over LSP on FILE (N edits, debounce 0) beside libclang's bare
//     reparse of the same edits (preamble reused), and hover latency while the index is built
//     from cold vs once it is idle.
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "server/analysis/compile_db.h"
#include "server/analysis/translation_unit.h"
#include "server/index/indexer.h"
#include "tests/integration/lsp_client.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using nlohmann::json;
using namespace perfhat;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

long rssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// CPU time of this process: less sensitive than wall time to the other load of a shared machine.
double cpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * (v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

index::IndexStats pass(const std::string& db, const std::string& root, const std::string& store,
                       std::shared_ptr<index::WorkspaceIndex> idx) {
  index::IndexerOptions o;
  o.database = db;
  o.analysis.workspace_root = root;
  o.idle_priority = false;
  index::Indexer indexer(std::move(idx), index::SummaryStore::open(store, nullptr), o);
  return indexer.run();
}

int runIndex(const std::string& db, const std::string& root, const std::string& store,
             const std::string& header) {
  auto files = analysis::cachedCompileDatabase(db)->files();
  std::printf("files: %zu\n", files.size());
  // Bare parse: what the index does at least (read, flags, one libclang parse per file).
  auto t0 = Clock::now();
  double cpu0 = cpuMs();
  double parse_sum = 0;
  for (const auto& f : files) {
    auto text = index::readFile(f);
    if (!text) continue;
    auto cc = analysis::compileCommandFor(f, db, {});
    auto tu = analysis::TranslationUnit::parse(f, *text, cc.args, nullptr,
                                               analysis::TranslationUnit::Mode::kOneShot);
    if (tu) parse_sum += tu->lastParseMs();
  }
  double bare_ms = msSince(t0);
  double bare_cpu = cpuMs() - cpu0;
  std::printf("bare parse: %.0f ms wall, %.0f ms CPU (libclang %.0f ms)\n", bare_ms, bare_cpu,
              parse_sum);

  std::error_code ec;
  for (const char* s : {"", "-wal", "-shm"}) fs::remove(store + s, ec);
  malloc_trim(0);
  long rss0 = rssKb();
  auto idx = std::make_shared<index::WorkspaceIndex>();
  double cpu1 = cpuMs();
  index::IndexStats cold = pass(db, root, store, idx);
  double cold_cpu = cpuMs() - cpu1;
  std::printf("index cold: %.0f ms CPU; CPU ratio to bare parse %.2f\n", cold_cpu,
              cold_cpu / bare_cpu);
  malloc_trim(0);
  long rss1 = rssKb();
  std::printf(
      "index cold: %.0f ms wall (libclang %.0f ms), %zu parsed, %zu failed, %zu functions; "
      "ratio to bare parse %.2f\n",
      cold.wall_ms, cold.parse_ms, cold.parsed, cold.failed, cold.functions,
      cold.wall_ms / bare_ms);
  std::printf("index memory: %.2f MB (estimated from the summaries), process RSS +%.1f MB\n",
              idx->approxBytes() / 1e6, (rss1 - rss0) / 1e3);
  std::printf("index on disk: %.2f MB\n",
              (fs::file_size(store, ec) + fs::file_size(store + "-wal", ec)) / 1e6);

  auto idx2 = std::make_shared<index::WorkspaceIndex>();
  index::IndexStats warm = pass(db, root, store, idx2);
  std::printf(
      "restart (store read back): %.0f ms wall, %zu unchanged, %zu parsed; index memory %.2f MB\n",
      warm.wall_ms, warm.reused, warm.parsed, idx2->approxBytes() / 1e6);

  if (!header.empty()) {
    auto original = index::readFile(header);
    if (!original) return 1;
    std::ofstream(header, std::ios::app) << "\n// perfhat index bench edit\n";
    index::IndexStats h = pass(db, root, store, idx2);
    std::ofstream(header, std::ios::trunc | std::ios::binary) << *original;
    std::printf("after editing %s: %.0f ms wall, %zu parsed, %zu unchanged\n",
                fs::path(header).filename().c_str(), h.wall_ms, h.parsed, h.reused);
    pass(db, root, store, idx2);  // back to the original text
  }
  return 0;
}

// The index's memory after a pass that reads STORE back (files unchanged since it was written).
int runMemory(const std::string& db, const std::string& root, const std::string& store) {
  malloc_trim(0);
  long rss0 = rssKb();
  auto idx = std::make_shared<index::WorkspaceIndex>();
  index::IndexStats st = pass(db, root, store, idx);
  malloc_trim(0);
  std::printf(
      "index memory: %.2f MB (estimated), process RSS +%.1f MB; %zu functions, %zu unchanged, "
      "%zu parsed, %.0f ms\n",
      idx->approxBytes() / 1e6, (rssKb() - rss0) / 1e3, st.functions, st.reused, st.parsed,
      st.wall_ms);
  return 0;
}

int runEdit(const std::string& lsp, const std::string& db, const std::string& root,
            const std::string& file, int n) {
  auto text = index::readFile(file);
  if (!text) return 1;
  int lines = static_cast<int>(std::count(text->begin(), text->end(), '\n'));
  int edit_line = lines / 2;
  // Text after edit i: odd edits insert a comment at the start of the middle line, even ones
  // take it out again.
  size_t line_start = 0;
  for (int l = 0; l < edit_line; ++l) line_start = text->find('\n', line_start) + 1;
  const std::string mark = "/*x*/";
  std::string with = *text;
  with.insert(line_start, mark);

  auto cc = analysis::compileCommandFor(file, db, {});
  auto tu = analysis::TranslationUnit::parse(file, *text, cc.args);
  std::vector<double> bare;
  for (int i = 1; i <= n; ++i) {
    tu->reparse(i % 2 ? with : *text);
    bare.push_back(tu->lastParseMs());
  }
  std::printf("%s: %d lines\n", file.c_str(), lines);
  std::printf("bare reparse (preamble reused): p50 %.1f ms, p95 %.1f ms (n=%d)\n", pct(bare, 0.5),
              pct(bare, 0.95), n);

  // The server, with its index built from cold (store deleted) while hovers are timed.
  std::error_code ec;
  fs::remove_all(fs::path(root) / ".cache" / "perfhat", ec);
  std::string log = "/tmp/perfhat-index-bench-" + std::to_string(getpid()) + ".log";
  perfhat::testing::LspProcess p(lsp, {}, log);
  p.call("initialize", {{"rootUri", "file://" + root},
                        {"initializationOptions",
                         {{"debounce", {{"minMs", 0}, {"maxMs", 0}}},
                          {"compileCommands", db},
                          {"analysis", {{"compile_commands", db}}}}},
                        {"capabilities", json::object()}});
  p.notify("initialized", json::object());
  const std::string uri = "file://" + file;
  p.notify(
      "textDocument/didOpen",
      {{"textDocument", {{"uri", uri}, {"languageId", "cpp"}, {"version", 1}, {"text", *text}}}});
  auto diag = [&](int version) {
    return p.waitFor(
        [&](const json& m) {
          return m.value("method", "") == "textDocument/publishDiagnostics" &&
                 m["params"].value("version", -1) == version;
        },
        std::chrono::seconds(120));
  };
  diag(1);
  auto indexDone = [&] {
    std::ifstream in(log);
    std::string s((std::istreambuf_iterator<char>(in)), {});
    return s.find("workspace index: ") != std::string::npos;
  };
  json hover = {{"textDocument", {{"uri", uri}}},
                {"position", {{"line", edit_line}, {"character", 4}}}};
  std::vector<double> during, idle;
  while (!indexDone() && during.size() < 2000) {
    auto t0 = Clock::now();
    p.call("textDocument/hover", hover);
    during.push_back(msSince(t0));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (int i = 0; i < 600 && !indexDone(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (int i = 0; i < 200; ++i) {
    auto t0 = Clock::now();
    p.call("textDocument/hover", hover);
    idle.push_back(msSince(t0));
  }
  std::printf(
      "hover while indexing: p50 %.2f ms, p95 %.2f ms (n=%zu); idle: p50 %.2f ms, p95 %.2f ms "
      "(n=%zu)\n",
      pct(during, 0.5), pct(during, 0.95), during.size(), pct(idle, 0.5), pct(idle, 0.95),
      idle.size());

  std::vector<double> lsp_ms;
  for (int i = 1; i <= n; ++i) {
    json change = i % 2 ? json{{"range",
                                {{"start", {{"line", edit_line}, {"character", 0}}},
                                 {"end", {{"line", edit_line}, {"character", 0}}}}},
                               {"text", mark}}
                        : json{{"range",
                                {{"start", {{"line", edit_line}, {"character", 0}}},
                                 {"end", {{"line", edit_line}, {"character", 5}}}}},
                               {"text", ""}};
    auto t0 = Clock::now();
    p.notify("textDocument/didChange", {{"textDocument", {{"uri", uri}, {"version", i + 1}}},
                                        {"contentChanges", json::array({change})}});
    if (!diag(i + 1)) {
      std::fprintf(stderr, "no diagnostics for version %d\n", i + 1);
      return 1;
    }
    lsp_ms.push_back(msSince(t0));
  }
  std::printf("edit -> fresh diagnostics over LSP (index on): p50 %.1f ms, p95 %.1f ms (n=%d)\n",
              pct(lsp_ms, 0.5), pct(lsp_ms, 0.95), n);
  std::printf("ratio to bare reparse: p50 %.2f, p95 %.2f\n", pct(lsp_ms, 0.5) / pct(bare, 0.5),
              pct(lsp_ms, 0.95) / pct(bare, 0.95));
  p.shutdownAndWait();
  fs::remove(log, ec);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each figure as soon as it is measured
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "index" && argc >= 5)
    return runIndex(argv[2], argv[3], argv[4], argc > 5 ? argv[5] : "");
  if (mode == "memory" && argc >= 5) return runMemory(argv[2], argv[3], argv[4]);
  if (mode == "edit" && argc >= 7)
    return runEdit(argv[2], argv[3], argv[4], argv[5], std::atoi(argv[6]));
  std::fprintf(stderr,
               "usage: index_bench index DB ROOT STORE [HEADER]\n"
               "       index_bench memory DB ROOT STORE\n"
               "       index_bench edit PERFHAT_LSP DB ROOT FILE N\n");
  return 2;
}
