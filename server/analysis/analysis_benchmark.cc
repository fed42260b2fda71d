// Benchmark of the analysis pipeline on a generated ~2,000-line C++ file that includes
// <vector>, <string>, <map> and <algorithm> (DESIGN §6 performance target: hints for an edited
// function within the libclang reparse time plus a few milliseconds).
//
//   BM_ColdParse   libclang parse with preamble creation (what opening a file costs)
//   BM_Reparse     reparse after a one-line edit, reusing the preamble
//   BM_Analysis    AST build + specification matching + inference on the reparsed TU; its
//                  counters also report the reparse time measured in the same run and the
//                  ratio analysis / reparse (goal: ≤ 5 %).
//
// Run: build-*/server/analysis/analysis_benchmark
//
// Measured 2026-11-22, Debian 12 VM, 2 vCPU shared with ~6 concurrent builds (load average
// 12.6, so wall times are inflated ~3x; process CPU time is the steadier figure), libclang
// 14.0.6, RelWithDebInfo. Generated file: 2,867 lines,
// 121 function definitions, 2,521 AST nodes (calls, loops, branches, function roots).
//   BM_ColdParse   wall 4,681 ms   CPU 1,432 ms
//   BM_Reparse     wall   800 ms   CPU   363 ms   (one-line edit, preamble reused)
//   BM_Analysis    wall    66 ms   CPU    29 ms   (AST walk 46 ms wall of it)
//   same run: reparse 908 ms wall / 432 ms CPU → analysis / reparse = 6.6 % CPU, 7.3 % wall.
// The 5 % goal is NOT met yet (8.9 % before caching callee keys/manglings and visiting
// non-structural subtrees in one libclang visit). Remaining cost per perf: libclang cursor
// visits and the derivation strings (snprintf) built for every node; building derivation text
// lazily is the next step.
// Folding constexpr calls (clang_Cursor_Evaluate on every call) added ~9 % to the analysis's
// instructions: in C++20 most standard library members are constexpr. Calls are now screened
// first (callee declared constexpr; no parameter, non-const variable or `this` read). callgrind,
// 2 AST builds + 1 inference, same generated file, 2026-11-22: 228.0 M instructions with the
// unscreened evaluation, 214.0 M screened (-6.1 %); nodes unchanged (2,281).
// Found on the way: libclang reuses the preamble only when the main file exists on disk; for an
// unsaved path every reparse cost a full parse (7 s wall here). See translation_unit.h.

#include <benchmark/benchmark.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "server/analysis/analyze.h"
#include "server/analysis/compile_db.h"

namespace perfhat::analysis {
namespace {

constexpr int kFunctions = 120;

// One service class per 10 functions; each function has a range-for over a vector, a counted
// loop, a map lookup, a std::sort, a branch and calls into other generated functions.
std::string generateSource(int edit) {
  std::string s =
      "#include <algorithm>\n#include <map>\n#include <string>\n#include <vector>\n\n"
      "namespace gen {\n"
      "struct Task { std::string name; int hours = 0; int cost() const { return hours * 2; } };\n"
      "int storage_read(int key);\n"
      "int storage_write(int key, const std::string& value);\n\n";
  for (int c = 0; c < kFunctions / 10; ++c) {
    s += "class Service" + std::to_string(c) + " {\n public:\n";
    s += "  std::vector<Task> tasks() const;\n";
    s += "  std::map<std::string, int> index() const;\n";
    for (int k = 0; k < 10; ++k)
      s += "  int step" + std::to_string(k) + "(int n, const std::string& label) const;\n";
    s += " private:\n  std::vector<int> data_;\n};\n\n";
  }
  for (int i = 0; i < kFunctions; ++i) {
    int c = i / 10, k = i % 10;
    std::string cls = "Service" + std::to_string(c);
    s +=
        "int " + cls + "::step" + std::to_string(k) + "(int n, const std::string& label) const {\n";
    s += "  int total = " + std::to_string(i == 0 ? edit : 0) + ";\n";
    s += "  for (const Task& t : tasks()) {\n";
    s += "    total += t.cost();\n";
    s += "    total += storage_read(t.hours);\n";
    s += "  }\n";
    s += "  for (int i = 0; i < 16; ++i) {\n";
    s += "    total += storage_read(i + n);\n";
    s += "  }\n";
    s += "  auto idx = index();\n";
    s += "  auto it = idx.find(label);\n";
    s += "  if (it != idx.end()) {\n";
    s += "    total += storage_write(it->second, label);\n";
    s += "  } else {\n";
    s += "    total -= 1;\n";
    s += "  }\n";
    s += "  std::vector<int> copy(data_.begin(), data_.end());\n";
    s += "  std::sort(copy.begin(), copy.end());\n";
    if (k > 0)
      s += "  total += step" + std::to_string(k - 1) + "(n - 1, label);\n";
    else
      s += "  total += n > 0 ? 1 : 0;\n";
    s += "  return total;\n";
    s += "}\n\n";
  }
  s += "}  // namespace gen\n";
  return s;
}

std::vector<std::string> argsFor(const std::string& path) {
  return compileCommandFor(path, "/nonexistent-perfhat-bench", {"-std=c++20", "-xc++"}).args;
}

// Production data for half of the functions (with call sites from the other half) and for the
// storage functions, shaped like a handler's batchGet answer.
InMemoryFeedback feedbackFor(const ParsedUnit& unit) {
  InMemoryFeedback view;
  for (size_t i = 0; i < unit.functions.size(); i += 2) {
    FeedbackItem it;
    it.key = unit.functions[i].key;
    const double mean = 1e6 * (1 + i % 7);
    const Stats st{.count = 1000 + i,
                   .mean_ns = mean,
                   .p50_ns = mean * 0.9,
                   .p90_ns = mean * 1.8,
                   .p99_ns = mean * 3,
                   .rate_per_s = 5.0 + i % 3};
    it.stats = st;
    for (int c = 0; c < 3; ++c) {
      CallSiteStats cs;
      cs.caller = "gen::caller" + std::to_string(c) + "()";
      cs.count = 100;
      cs.mean_ns = st.mean_ns * (1 + 0.2 * c);
      cs.caller_rate_per_s = 1 + c;
      it.callsites.push_back(cs);
    }
    view.add(std::move(it));
  }
  for (const char* k : {"gen::storage_read(int)", "gen::storage_write(int, const std::string &)",
                        "gen::Service0::tasks() const"}) {
    FeedbackItem it;
    it.key = k;
    it.stats = Stats{.count = 5000, .mean_ns = 2e5, .p50_ns = 1.8e5, .p90_ns = 4e5, .p99_ns = 9e5};
    it.result_size = SizeStats{12, 30, 80, 5000};
    view.add(std::move(it));
  }
  return view;
}

// libclang reuses the preamble only when the main file exists on disk (translation_unit.h), so
// the generated text is also written to a private temporary file; edits stay in memory.
const std::string& benchPath() {
  static const std::string path = [] {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "perfhat-bench-XXXXXX.cc").string();
    int fd = mkstemps(tmpl.data(), 3);
    if (fd >= 0) close(fd);
    std::ofstream(tmpl) << generateSource(0);
    return tmpl;
  }();
  return path;
}

struct PathCleanup {
  ~PathCleanup() {
    std::error_code ec;
    std::filesystem::remove(benchPath(), ec);
  }
} cleanup;

// Process CPU time (all threads: libclang parses on a thread of its own), in milliseconds. The
// machine is shared, so CPU time is the steadier figure; wall time is reported too.
double cpuMs() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e3 +
         (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e3;
}

void BM_ColdParse(benchmark::State& state) {
  std::string src = generateSource(0);
  auto args = argsFor(benchPath());
  double cpu = 0;
  for ([[maybe_unused]] auto _ : state) {
    double c0 = cpuMs();
    auto tu = TranslationUnit::parse(benchPath(), src, args).value;
    cpu += cpuMs() - c0;
    if (!tu) state.SkipWithError("parse failed");
    benchmark::DoNotOptimize(tu.get());
  }
  state.counters["cpu_ms"] = cpu / static_cast<double>(state.iterations());
  state.counters["lines"] = static_cast<double>(std::count(src.begin(), src.end(), '\n'));
}
BENCHMARK(BM_ColdParse)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_Reparse(benchmark::State& state) {
  auto tu = TranslationUnit::parse(benchPath(), generateSource(0), argsFor(benchPath())).value;
  if (!tu) return state.SkipWithError("parse failed");
  tu->reparse(generateSource(1));  // the first reparse builds the preamble's reuse state
  int edit = 2;
  double cpu = 0;
  for ([[maybe_unused]] auto _ : state) {
    std::string src = generateSource(edit++);
    double c0 = cpuMs();
    if (!tu->reparse(std::move(src))) state.SkipWithError("reparse failed");
    cpu += cpuMs() - c0;
  }
  state.counters["cpu_ms"] = cpu / static_cast<double>(state.iterations());
}
BENCHMARK(BM_Reparse)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_Analysis(benchmark::State& state) {
  auto tu = TranslationUnit::parse(benchPath(), generateSource(0), argsFor(benchPath())).value;
  if (!tu) return state.SkipWithError("parse failed");
  tu->reparse(generateSource(1));
  // The reparse this analysis sits on, measured in the same run.
  double reparse_ms = 0, reparse_cpu = 0;
  for (int i = 0; i < 5; ++i) {
    std::string src = generateSource(2 + i);
    double c0 = cpuMs();
    tu->reparse(std::move(src));
    reparse_cpu += cpuMs() - c0;
    reparse_ms += tu->lastParseMs();
  }
  reparse_ms /= 5;
  reparse_cpu /= 5;
  AnalysisOptions options;
  ParsedUnit probe = buildAst(*tu, options);
  InMemoryFeedback view = feedbackFor(probe);
  double total_ms = 0, total_cpu = 0, build_ms = 0;
  size_t nodes = 0;
  for ([[maybe_unused]] auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    double c0 = cpuMs();
    ParsedUnit unit = buildAst(*tu, options);
    SnapshotPtr snap = analyze(unit, view, options);
    total_cpu += cpuMs() - c0;
    build_ms += unit.build_ms;
    total_ms +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    nodes = 0;
    for (const auto& f : snap->functions) nodes += f.nodes.size();
    benchmark::DoNotOptimize(snap.get());
  }
  double n = static_cast<double>(state.iterations());
  double analysis_ms = total_ms / n;
  double analysis_cpu = total_cpu / n;
  state.counters["ast_build_ms"] = build_ms / n;
  state.counters["reparse_cpu_ms"] = reparse_cpu;
  state.counters["analysis_cpu_ms"] = analysis_cpu;
  state.counters["ratio_cpu_pct"] = 100.0 * analysis_cpu / reparse_cpu;
  state.counters["functions"] = static_cast<double>(probe.functions.size());
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["reparse_ms"] = reparse_ms;
  state.counters["analysis_ms"] = analysis_ms;
  state.counters["ratio_pct"] = 100.0 * analysis_ms / reparse_ms;
}
BENCHMARK(BM_Analysis)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace
}  // namespace perfhat::analysis
