// The workspace index's measurements (issue #25, bench/README.md "Workspace index"):
//
//   index_bench index DB ROOT STORE [HEADER]
//     the index from cold (STORE deleted) interleaved file by file with the bare libclang parse
//     of the same file (no preamble, as the indexer parses), in CPU time of this process; then a
//     restart that reads STORE back, the index's memory; with HEADER, a comment is appended to
//     it, the pass re-run (the update after an edit of a widely included header) and the header
//     restored.
//   index_bench split DB ROOT FILE N [index]
//     N edits of FILE analysed in this process, split by phase, beside the bare reparse (CPU);
//     with `index`, the workspace index of DB is built first (as the server's, index on).
//   index_bench edit PERFHAT_LSP DB ROOT FILE N
//     hover and inlay-hint latency on FILE in a server building its index from cold, alternating
//     with a server whose index is off (same run, same load); then, the index built, N edits →
//     fresh inlay hints over LSP (debounce 0; a hint request sent right after the change is
//     answered from the changed text's snapshot), each interleaved with libclang's bare reparse
//     of the same text (preamble reused), in wall time and CPU time (the server's worker thread
//     vs this thread).
//   index_bench edits PERFHAT_LSP DB ROOT FILE N
//     the edit step of `edit` alone: one server, its index read back from ROOT's store (or built
//     at normal priority), then the N edits.
//   index_bench threads DB FILE N
//     libclang's reparse of N edits on the main thread and on two other threads, in turn
//     (reparse_threads.h).
#include <malloc.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "bench/index/edit_split.h"
#include "bench/index/percentile.h"
#include "bench/index/reparse_threads.h"
#include "common/cli.h"
#include "server/analysis/compile_db.h"
#include "server/analysis/translation_unit.h"
#include "server/index/indexer.h"
#include "server/server/thread_cpu.h"
#include "tests/integration/lsp_client.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using nlohmann::json;
using namespace perfhat;
using perfhat::bench::pct;

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

// An indexer over DB writing to STORE, as the server's runs but on this thread at normal
// priority and publishing at once.
std::unique_ptr<index::Indexer> indexer(const std::string& db, const std::string& root,
                                        const std::string& store,
                                        std::shared_ptr<index::WorkspaceIndex> idx) {
  index::IndexerOptions o;
  o.database = db;
  o.analysis.workspace_root = root;
  o.idle_priority = false;
  return std::make_unique<index::Indexer>(std::move(idx), index::SummaryStore::open(store).value,
                                          o);
}

int runIndex(const std::string& db, const std::string& root, const std::string& store,
             const std::string& header) {
  setenv("LIBCLANG_NOTHREADS", "1", 1);  // libclang on this thread, inside this process' clock
  auto files = analysis::cachedCompileDatabase(db)->files();
  std::printf("files: %zu\n", files.size());
  std::error_code ec;
  for (const char* s : {"", "-wal", "-shm"}) fs::remove(store + s, ec);
  malloc_trim(0);
  long rss0 = rssKb();
  auto idx = std::make_shared<index::WorkspaceIndex>();
  auto cold = indexer(db, root, store, idx);
  // Interleaved per file, the order alternating: the bare parse (what the index does at least:
  // read, flags, one libclang parse without preamble) and the index's own work on the same file
  // (parse, AST walk, summaries, SQLite), so that both see the same load.
  double bare_cpu = 0, index_cpu = 0, bare_wall = 0, index_wall = 0;
  size_t parsed = 0, failed = 0;
  auto bare = [&](const std::string& f) {
    auto t0 = Clock::now();
    double c0 = cpuMs();
    auto text = index::readFile(f);
    if (text) {
      auto cc = analysis::compileCommandFor(f, db, {});
      analysis::TranslationUnit::parse(f, *text, cc.args,
                                       analysis::TranslationUnit::Mode::kOneShot);
    }
    bare_cpu += cpuMs() - c0;
    bare_wall += msSince(t0);
  };
  auto indexed = [&](const std::string& f) {
    auto t0 = Clock::now();
    double c0 = cpuMs();
    cold->indexFile(f) ? ++parsed : ++failed;
    index_cpu += cpuMs() - c0;
    index_wall += msSince(t0);
  };
  for (size_t i = 0; i < files.size(); ++i) {
    if (i % 2) {
      indexed(files[i]);
      bare(files[i]);
    } else {
      bare(files[i]);
      indexed(files[i]);
    }
  }
  malloc_trim(0);
  long rss1 = rssKb();
  std::printf("bare parse: %.0f ms CPU, %.0f ms wall\n", bare_cpu, bare_wall);
  std::printf("index cold: %.0f ms CPU, %.0f ms wall; %zu parsed, %zu failed, %zu functions\n",
              index_cpu, index_wall, parsed, failed, idx->functionCount());
  std::printf("index cold / bare parse (interleaved): CPU %.3f, wall %.3f\n", index_cpu / bare_cpu,
              index_wall / bare_wall);
  std::printf("index memory: %.2f MB (estimated from the summaries), process RSS +%.1f MB\n",
              idx->approxBytes() / 1e6, (rss1 - rss0) / 1e3);
  std::printf("index on disk: %.2f MB\n",
              (fs::file_size(store, ec) + fs::file_size(store + "-wal", ec)) / 1e6);
  cold.reset();

  auto idx2 = std::make_shared<index::WorkspaceIndex>();
  double c0 = cpuMs();
  index::IndexStats warm = indexer(db, root, store, idx2)->run();
  std::printf(
      "restart (store read back): %.0f ms CPU, %.0f ms wall, %zu unchanged, %zu parsed; index "
      "memory %.2f MB\n",
      cpuMs() - c0, warm.wall_ms, warm.reused, warm.parsed, idx2->approxBytes() / 1e6);

  if (!header.empty()) {
    auto original = index::readFile(header);
    if (!original) return 1;
    std::ofstream(header, std::ios::app) << "\n// perfhat index bench edit\n";
    c0 = cpuMs();
    index::IndexStats h = indexer(db, root, store, idx2)->run();
    double h_cpu = cpuMs() - c0;
    std::ofstream(header, std::ios::trunc | std::ios::binary) << *original;
    std::printf(
        "update after editing %s: %.0f ms CPU, %.0f ms wall, %zu re-parsed, %zu unchanged; "
        "CPU %.2f of the cold index\n",
        fs::path(header).filename().c_str(), h_cpu, h.wall_ms, h.parsed, h.reused,
        h_cpu / index_cpu);
    indexer(db, root, store, idx2)->run();  // back to the original text
  }
  return 0;
}

// The index's memory after a pass that reads STORE back (files unchanged since it was written).
int runMemory(const std::string& db, const std::string& root, const std::string& store) {
  malloc_trim(0);
  long rss0 = rssKb();
  auto idx = std::make_shared<index::WorkspaceIndex>();
  index::IndexStats st = indexer(db, root, store, idx)->run();
  malloc_trim(0);
  std::printf(
      "index memory: %.2f MB (estimated), process RSS +%.1f MB; %zu functions, %zu unchanged, "
      "%zu parsed, %.0f ms\n",
      idx->approxBytes() / 1e6, (rssKb() - rss0) / 1e3, st.functions, st.reused, st.parsed,
      st.wall_ms);
  return 0;
}

// On-CPU time of the server's thread named `name` (/proc schedstat, ns), or -1.
double threadCpuMs(pid_t pid, const std::string& name) {
  std::error_code ec;
  for (const auto& t : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::string comm;
    std::getline(std::ifstream(t.path() / "comm"), comm);
    if (comm != name) continue;
    double ns = -1;
    std::ifstream(t.path() / "schedstat") >> ns;
    return ns / 1e6;
  }
  return -1;
}

// This thread's kernel CPU time (ms) and minor page faults so far.
std::pair<double, double> threadSysAndFaults() {
  rusage r{};
  getrusage(RUSAGE_THREAD, &r);
  return {r.ru_stime.tv_sec * 1e3 + r.ru_stime.tv_usec / 1e3, static_cast<double>(r.ru_minflt)};
}

// The server's analysis: its worker and the thread libclang parses on (parse_thread.h).
double analysisCpuMs(pid_t pid) {
  return threadCpuMs(pid, "perfhat-worker") + std::max(0.0, threadCpuMs(pid, "perfhat-parse"));
}

std::string percentiles(const std::vector<double>& v, const char* unit = "ms") {
  char buf[160];
  std::snprintf(buf, sizeof buf, "p50 %.2f %s, p95 %.2f %s, p99 %.2f %s (n=%zu)", pct(v, 0.5), unit,
                pct(v, 0.95), unit, pct(v, 0.99), unit, v.size());
  return buf;
}

struct Server {
  std::unique_ptr<perfhat::testing::LspProcess> p;
  std::string log;
};

Server startServer(const std::string& lsp, const std::string& db, const std::string& root,
                   const std::string& uri, const std::string& text, bool index) {
  Server s;
  s.log = "/tmp/perfhat-index-bench-" + std::to_string(getpid()) + (index ? "-index" : "-idle") +
          ".log";
  std::error_code ec;
  fs::remove(s.log, ec);
  s.p = std::make_unique<perfhat::testing::LspProcess>(lsp, std::vector<std::string>{}, s.log);
  json analysis = {{"compile_commands", db}};
  if (!index) analysis["index"] = {{"enabled", false}};
  s.p->call("initialize", {{"rootUri", "file://" + root},
                           {"initializationOptions",
                            {{"debounce", {{"minMs", 0}, {"maxMs", 0}}},
                             {"compileCommands", db},
                             {"analysis", analysis}}},
                           {"capabilities", json::object()}});
  s.p->notify("initialized", json::object());
  s.p->notify(
      "textDocument/didOpen",
      {{"textDocument", {{"uri", uri}, {"languageId", "cpp"}, {"version", 1}, {"text", text}}}});
  return s;
}

bool waitDiagnostics(perfhat::testing::LspProcess& p, int version) {
  return p
      .waitFor(
          [&](const json& m) {
            return m.value("method", "") == "textDocument/publishDiagnostics" &&
                   m["params"].value("version", -1) == version;
          },
          std::chrono::seconds(600))
      .has_value();
}

bool logHas(const std::string& log, const std::string& what) {
  std::ifstream in(log);
  std::string s((std::istreambuf_iterator<char>(in)), {});
  return s.find(what) != std::string::npos;
}

// Moves every thread of `pid` to the normal scheduling class.
void normalPriority(pid_t pid) {
  std::error_code ec;
  sched_param p{};
  for (const auto& t : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec))
    sched_setscheduler(std::stoi(t.path().filename().string()), SCHED_OTHER, &p);
}

// Waits (up to an hour) until the server logs the end of its index pass.
bool waitIndexed(const std::string& log) {
  for (int i = 0; i < 36000; ++i) {
    if (logHas(log, "workspace index: ")) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// The server's own account of each build after the first: "built F vN in T ms (parse P, ...)".
void printBuildSplit(const std::string& log) {
  std::ifstream in(log);
  std::string line;
  std::vector<double> total, parse, rest;
  while (std::getline(in, line)) {
    auto b = line.find("built ");
    auto v = line.find(" v", b);
    if (b == std::string::npos || v == std::string::npos || line.compare(v, 4, " v1 ") == 0 ||
        line.find(" in ", v) == std::string::npos)
      continue;
    double t = 0, pm = 0;
    if (std::sscanf(line.c_str() + line.find(" in ", v), " in %lf ms (parse %lf", &t, &pm) != 2)
      continue;
    total.push_back(t);
    parse.push_back(pm);
    rest.push_back(t - pm);
  }
  std::printf("server's builds (wall): total %s\n", percentiles(total).c_str());
  std::printf("  of which libclang reparse %s\n", percentiles(parse).c_str());
  std::printf("  of which everything else (AST walk, index, inference) %s\n",
              percentiles(rest).c_str());
}

// The server's own per-stage account of each build after the first, when it ran with
// PERFHAT_EDIT_TRACE: "edit trace URI vN: queued Q | stage wall/cpu/sys/faults ... | total ...".
void printEditTrace(const std::string& log) {
  std::ifstream in(log);
  std::string line;
  std::vector<std::string> order;
  std::map<std::string, std::array<std::vector<double>, 4>> stages;
  std::vector<double> queued;
  while (std::getline(in, line)) {
    auto at = line.find("edit trace ");
    if (at == std::string::npos || line.find(" v1: ", at) != std::string::npos) continue;
    std::istringstream words(line.substr(line.find(": queued ", at) + 9));
    double q = 0;
    words >> q;
    queued.push_back(q);
    std::string name, value;
    while (words >> name) {
      if (name == "|") continue;
      if (!(words >> value)) break;
      std::array<double, 4> v{};
      if (std::sscanf(value.c_str(), "%lf/%lf/%lf/%lf", &v[0], &v[1], &v[2], &v[3]) != 4) continue;
      auto [it, first] = stages.try_emplace(name);
      if (first) order.push_back(name);
      for (int k = 0; k < 4; ++k) it->second[k].push_back(v[k]);
    }
  }
  if (queued.empty()) return;
  std::printf("server's edit trace (p50 of %zu builds): queued %.2f ms\n", queued.size(),
              pct(queued, 0.5));
  std::printf("  %-14s %10s %10s %10s %10s %10s\n", "stage", "wall", "cpu", "cpu p95", "sys",
              "faults");
  for (const auto& name : order) {
    const auto& v = stages[name];
    std::printf("  %-14s %10.2f %10.2f %10.2f %10.2f %10.0f\n", name.c_str(), pct(v[0], 0.5),
                pct(v[1], 0.5), pct(v[1], 0.95), pct(v[2], 0.5), pct(v[3], 0.5));
  }
}

// The edited text of FILE: odd edits insert a comment at the start of the middle line, even ones
// take it out again.
struct EditPlan {
  int edit_line = 0;
  std::string with;  // the text after an odd edit
  json hints;        // a screenful of hints around the edited line, as an editor asks for them
};

EditPlan editPlan(const std::string& uri, const std::string& text) {
  EditPlan e;
  int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  e.edit_line = lines / 2;
  size_t line_start = 0;
  for (int l = 0; l < e.edit_line; ++l) line_start = text.find('\n', line_start) + 1;
  e.with = text;
  e.with.insert(line_start, "/*x*/");
  e.hints = {{"textDocument", {{"uri", uri}}},
             {"range",
              {{"start", {{"line", std::max(0, e.edit_line - 30)}, {"character", 0}}},
               {"end", {{"line", e.edit_line + 30}, {"character", 0}}}}}};
  return e;
}

// N edits → fresh inlay hints on `busy` (index built), each beside libclang's bare reparse of the
// same text in this process; then the server's own split of its builds.
int editLoop(Server& busy, const std::string& db, const std::string& file, const std::string& text,
             int n) {
  const std::string uri = "file://" + file;
  const EditPlan plan = editPlan(uri, text);
  const int edit_line = plan.edit_line;
  const std::string& with = plan.with;
  const json& hints = plan.hints;
  const std::string mark = "/*x*/";
  // Edits, each beside libclang's bare reparse of the same text (a TU with a preamble, reparsed
  // on this thread: its thread CPU time is the reparse's), interleaved.
  setenv("LIBCLANG_NOTHREADS", "1", 1);
  auto cc = analysis::compileCommandFor(file, db, {});
  auto tu = analysis::TranslationUnit::parse(file, text, cc.args).value;
  std::vector<double> bare, bare_cpu, bare_sys, bare_faults, lsp_ms, lsp_cpu;
  for (int i = 1; i <= n; ++i) {
    double c0 = server::threadCpuMs();
    const auto [sys0, flt0] = threadSysAndFaults();
    tu->reparse(i % 2 ? with : text);
    bare_cpu.push_back(server::threadCpuMs() - c0);
    const auto [sys1, flt1] = threadSysAndFaults();
    bare_sys.push_back(sys1 - sys0);
    bare_faults.push_back(flt1 - flt0);
    bare.push_back(tu->lastParseMs());

    json change = i % 2 ? json{{"range",
                                {{"start", {{"line", edit_line}, {"character", 0}}},
                                 {"end", {{"line", edit_line}, {"character", 0}}}}},
                               {"text", mark}}
                        : json{{"range",
                                {{"start", {{"line", edit_line}, {"character", 0}}},
                                 {"end", {{"line", edit_line}, {"character", 5}}}}},
                               {"text", ""}};
    double w0 = analysisCpuMs(busy.p->pid());
    auto t0 = Clock::now();
    busy.p->notify("textDocument/didChange", {{"textDocument", {{"uri", uri}, {"version", i + 1}}},
                                              {"contentChanges", json::array({change})}});
    // A request after a change is answered from the snapshot of the changed text (the server
    // queues it until that is built): its answer is the fresh hints.
    auto fresh = busy.p->call("textDocument/inlayHint", hints, std::chrono::seconds(600));
    if (!fresh || !fresh->contains("result")) {
      std::fprintf(stderr, "no inlay hints for version %d\n", i + 1);
      return 1;
    }
    lsp_ms.push_back(msSince(t0));
    lsp_cpu.push_back(analysisCpuMs(busy.p->pid()) - w0);
    if (!waitDiagnostics(*busy.p, i + 1)) {
      std::fprintf(stderr, "no diagnostics for version %d\n", i + 1);
      return 1;
    }
  }
  std::printf("bare reparse (preamble reused), wall: %s\n", percentiles(bare).c_str());
  std::printf("edit -> fresh inlay hints over LSP, wall: %s\n", percentiles(lsp_ms).c_str());
  std::printf("  ratio p50 %.3f, p95 %.3f\n", pct(lsp_ms, 0.5) / pct(bare, 0.5),
              pct(lsp_ms, 0.95) / pct(bare, 0.95));
  std::printf("bare reparse, CPU: %s\n", percentiles(bare_cpu).c_str());
  std::printf("edit -> fresh inlay hints, server worker + parse thread CPU: %s\n",
              percentiles(lsp_cpu).c_str());
  std::printf("  ratio p50 %.3f, p95 %.3f\n", pct(lsp_cpu, 0.5) / pct(bare_cpu, 0.5),
              pct(lsp_cpu, 0.95) / pct(bare_cpu, 0.95));
  std::printf("  of which in the kernel: %s; minor page faults: %s\n",
              percentiles(bare_sys).c_str(), percentiles(bare_faults, "").c_str());
  // Paired by edit (the same text, one right after the other), and each of the two texts the
  // edits alternate between apart: the reparse's CPU time can differ between them, and a p50
  // taken over both then falls between two groups and moves with a few edits.
  std::vector<double> paired, by_text[2][2];
  for (size_t i = 0; i < lsp_cpu.size(); ++i) {
    paired.push_back(lsp_cpu[i] / bare_cpu[i]);
    by_text[i % 2][0].push_back(bare_cpu[i]);
    by_text[i % 2][1].push_back(lsp_cpu[i]);
  }
  std::printf("  per edit, server CPU / bare reparse CPU of the same text: %s\n",
              percentiles(paired, "").c_str());
  for (int t = 0; t < 2; ++t)
    std::printf("  text %s: bare CPU p50 %.2f ms, server CPU p50 %.2f ms (n=%zu)\n",
                t == 0 ? "edited" : "original", pct(by_text[t][0], 0.5), pct(by_text[t][1], 0.5),
                by_text[t][0].size());
  busy.p->shutdownAndWait();
  printBuildSplit(busy.log);
  printEditTrace(busy.log);
  return 0;
}

int runEdit(const std::string& lsp, const std::string& db, const std::string& root,
            const std::string& file, int n) {
  auto text = index::readFile(file);
  if (!text) return 1;
  std::printf("%s: %zd lines\n", file.c_str(), std::count(text->begin(), text->end(), '\n'));

  // Two servers on the same file, alive together: one with the index off (the idle baseline)
  // and one building its index from cold. Hovers alternate between them, so both see the same
  // machine load.
  std::error_code ec;
  fs::remove_all(fs::path(root) / ".cache" / "perfhat", ec);
  const std::string uri = "file://" + file;
  Server idle = startServer(lsp, db, root, uri, *text, false);
  Server busy = startServer(lsp, db, root, uri, *text, true);
  if (!waitDiagnostics(*idle.p, 1) || !waitDiagnostics(*busy.p, 1)) {
    std::fprintf(stderr, "no diagnostics for the opened file\n");
    return 1;
  }
  const EditPlan plan = editPlan(uri, *text);
  const json& hints = plan.hints;
  json hover = {{"textDocument", {{"uri", uri}}},
                {"position", {{"line", plan.edit_line}, {"character", 4}}}};
  std::vector<double> during, baseline, hints_during, hints_baseline;
  auto timed = [&](perfhat::testing::LspProcess& p, const char* method, const json& params,
                   std::vector<double>& into) {
    auto t0 = Clock::now();
    p.call(method, params);
    into.push_back(msSince(t0));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  };
  bool finished = false;
  for (int i = 0; i < 3000 && !(finished = logHas(busy.log, "workspace index: ")); ++i) {
    timed(*idle.p, "textDocument/hover", hover, baseline);
    timed(*busy.p, "textDocument/hover", hover, during);
    timed(*idle.p, "textDocument/inlayHint", hints, hints_baseline);
    timed(*busy.p, "textDocument/inlayHint", hints, hints_during);
  }
  const char* unfinished = finished ? "" : " (index not finished when the requests ended)";
  std::printf("hover, index building:  %s%s\n", percentiles(during).c_str(), unfinished);
  std::printf("hover, index off (same run, alternating): %s\n", percentiles(baseline).c_str());
  std::printf("hover ratio p50 %.2f, p95 %.2f, p99 %.2f\n", pct(during, 0.5) / pct(baseline, 0.5),
              pct(during, 0.95) / pct(baseline, 0.95), pct(during, 0.99) / pct(baseline, 0.99));
  std::printf("inlay hints (61 lines), index building:  %s%s\n", percentiles(hints_during).c_str(),
              unfinished);
  std::printf("inlay hints, index off (same run, alternating): %s\n",
              percentiles(hints_baseline).c_str());
  std::printf("inlay hints ratio p50 %.2f, p95 %.2f, p99 %.2f\n",
              pct(hints_during, 0.5) / pct(hints_baseline, 0.5),
              pct(hints_during, 0.95) / pct(hints_baseline, 0.95),
              pct(hints_during, 0.99) / pct(hints_baseline, 0.99));
  // The edits are measured with the index built. Its thread runs at SCHED_IDLE, which on a
  // loaded machine barely runs: the rest of the pass runs in the normal class (as
  // clangd_memory.py does for clangd), which the hover figures above did not have.
  if (!finished) normalPriority(busy.p->pid());
  if (!finished && !waitIndexed(busy.log)) {
    std::fprintf(stderr, "the index did not finish\n");
    return 1;
  }
  idle.p->shutdownAndWait();

  const int rc = editLoop(busy, db, file, *text, n);
  fs::remove(idle.log, ec);
  fs::remove(busy.log, ec);
  return rc;
}

// The edit step alone: one server with the index on (read back from ROOT's store when it is
// there, else built at normal priority), then N edits as in runEdit.
int runEditsOnly(const std::string& lsp, const std::string& db, const std::string& root,
                 const std::string& file, int n) {
  auto text = index::readFile(file);
  if (!text) return 1;
  std::printf("%s: %zd lines\n", file.c_str(), std::count(text->begin(), text->end(), '\n'));
  Server busy = startServer(lsp, db, root, "file://" + file, *text, true);
  std::printf("server pid %d\n", static_cast<int>(busy.p->pid()));
  if (!waitDiagnostics(*busy.p, 1)) {
    std::fprintf(stderr, "no diagnostics for the opened file\n");
    return 1;
  }
  normalPriority(busy.p->pid());
  if (!waitIndexed(busy.log)) {
    std::fprintf(stderr, "the index did not finish\n");
    return 1;
  }
  const int rc = editLoop(busy, db, file, *text, n);
  std::error_code ec;
  if (!getenv("INDEX_BENCH_KEEP_LOG")) fs::remove(busy.log, ec);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each figure as soon as it is measured
  CLI::App app("The workspace index's measurements (bench/index/run.sh, bench/README.md).",
               "index_bench");
  perfhat::cli::configure(app, "0.1.0");
  app.require_subcommand(1);
  std::string db, root, store, header, file, lsp;
  int n = 0;
  std::string split_index;
  auto positive = perfhat::cli::positiveInteger();
  CLI::App* index = app.add_subcommand("index", "index from cold against the bare parse");
  index->add_option("DB", db, "compile_commands.json")->required();
  index->add_option("ROOT", root, "the workspace root")->required();
  index->add_option("STORE", store, "where the index's summaries go")->required();
  index->add_option("HEADER", header, "a widely included header to edit afterwards");
  CLI::App* split = app.add_subcommand("split", "one edit's stages, in this process");
  split->add_option("DB", db, "compile_commands.json")->required();
  split->add_option("ROOT", root, "the workspace root")->required();
  split->add_option("FILE", file, "the file to edit")->required();
  split->add_option("N", n, "edits")->required()->check(positive);
  split->add_option("INDEX", split_index, "'index' to measure with the workspace index on")
      ->check(CLI::IsMember({"index"}));
  CLI::App* memory = app.add_subcommand("memory", "the index's memory against clangd's");
  memory->add_option("DB", db, "compile_commands.json")->required();
  memory->add_option("ROOT", root, "the workspace root")->required();
  memory->add_option("STORE", store, "where the index's summaries go")->required();
  CLI::App* edit = app.add_subcommand("edit", "edit → fresh hints over LSP, with the index built");
  CLI::App* edits =
      app.add_subcommand("edits", "edit → fresh hints over LSP against the bare reparse");
  for (CLI::App* c : {edit, edits}) {
    c->add_option("PERFHAT_LSP", lsp, "the perfhat-lsp binary")->required();
    c->add_option("DB", db, "compile_commands.json")->required();
    c->add_option("ROOT", root, "the workspace root")->required();
    c->add_option("FILE", file, "the file to edit")->required();
    c->add_option("N", n, "edits")->required()->check(positive);
  }
  CLI::App* threads = app.add_subcommand("threads", "libclang's reparse on the worker and apart");
  threads->add_option("DB", db, "compile_commands.json")->required();
  threads->add_option("FILE", file, "the file to reparse")->required();
  threads->add_option("N", n, "reparses")->required()->check(positive);
  perfhat::cli::parse(app, argc, argv);

  // The server is given DB, ROOT and FILE in its settings and URIs, where a relative path would
  // be relative to ROOT (or no URI at all): they are made absolute here, against this directory.
  auto absolute = [](const std::string& p) { return fs::absolute(p).lexically_normal().string(); };
  if (*index) return runIndex(db, root, store, header);
  if (*memory) return runMemory(db, root, store);
  if (*edit) return runEdit(lsp, absolute(db), absolute(root), absolute(file), n);
  if (*edits) return runEditsOnly(lsp, absolute(db), absolute(root), absolute(file), n);
  if (*threads) return perfhat::bench::runReparseThreads(db, file, n);
  return perfhat::bench::runSplit(db, root, file, n, split_index == "index");
}
