// perfhat-lsp: the language server (LSP on stdio) and its `--check` mode (DESIGN §6, §12).
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/cli.h"
#include "server/analysis/feedback_view.h"
#include "server/check_many.h"
#include "server/features/annotate.h"
#include "server/features/names.h"
#include "server/feedback/provider.h"
#include "server/lsp/transport.h"
#include "server/process_temp_dir.h"
#include "server/server/clang_analyzer.h"
#include "server/server/config.h"
#include "server/server/large_stack_thread.h"
#include "server/server/log.h"
#include "server/server/server.h"
#include "server/server/sources.h"

#ifndef PERFHAT_VERSION
#define PERFHAT_VERSION "0.1.0"
#endif

namespace {

using nlohmann::json;
using namespace perfhat;
using namespace perfhat::server;

constexpr const char* kAbout = R"(perfhat-lsp — production performance feedback in the C/C++ editor

  perfhat-lsp [options]                      language server on stdin/stdout (LSP 3.17)
  perfhat-lsp --check FILE.cpp [options]     print FILE annotated with the editor's hints,
                                             plus parse / fetch / analysis timings; exit status
                                             1 if FILE cannot be read, 2 if the feedback source
                                             failed (FILE is still printed, without its data)
  perfhat-lsp --check A.cc B.cc ... | --compile-db DIR [--sarif OUT]
                                             CI mode: index the workspace, one summary line per
                                             file; exit status 3 when any regression warning is
                                             produced (1 unreadable file, 2 feedback failed))";
constexpr const char* kFooter =
    R"(Configuration precedence: command line > environment (PERFHAT_HANDLER, PERFHAT_TOKEN,
PERFHAT_FEEDBACK_FILE, PERFHAT_PROFILE, PERFHAT_COMPILE_COMMANDS, PERFHAT_CACHE_MAX_ENTRIES,
PERFHAT_CACHE_TTL_S) > editor settings > .perfhat.json at the workspace root > defaults.
Logs go to stderr; stdout carries only the protocol.)";

struct Args {
  json cli = json::object();
  std::string check_file;
  std::vector<std::string> check_files;
  std::string compile_db;
  std::string sarif;
  std::string log_file;
  std::string match_report;
  bool verbose = false;
  bool index = false;  // single-file --check: index the compile database first
  int color = -1;      // -1 auto
};

// Exits for --help, --version and a wrong command line (common/cli.h).
void parseArgs(int argc, char** argv, Args& a) {
  CLI::App app(kAbout, "perfhat-lsp");
  perfhat::cli::configure(app, PERFHAT_VERSION);
  app.footer(kFooter);
  auto setting = [&](const char* flag, const char* key, const char* help) {
    app.add_option_function<std::string>(
        flag, [&a, key](const std::string& v) { a.cli[key] = v; }, help);
  };
  setting("--feedback-file", "feedbackFile", "offline production data (batchGet response format)");
  setting("--handler", "handler", "a feedback handler, e.g. http://127.0.0.1:4319");
  setting("--token", "token", "bearer token for the handler");
  setting("--compile-commands", "compileCommands",
          "DIR|FILE where compile_commands.json is (default: search upward)");
  app.add_option_function<std::string>(
      "--profile",
      [&a](const std::string& p) {
        if (p != "design" && p != "debug") {
          throw CLI::ValidationError("--profile must be design or debug");
        }
        a.cli["profile"] = p;
      },
      "design|debug: few coarse hints, or everything (default: debug)");
  app.add_option("--check", a.check_files,
                 "FILE.cpp to print annotated; several files: one summary line each (see above)");
  app.add_option("--compile-db", a.compile_db,
                 "--check every file of this compile database (DIR or compile_commands.json)");
  app.add_option("--sarif", a.sarif, "--check: also write the diagnostics as SARIF 2.1.0 to FILE");
  app.add_option("--match-report", a.match_report,
                 "--check: append one JSON line per function definition (key, how its production "
                 "data matched, the items it came from) and one per file (regression warnings), "
                 "for tests/realcode");
  app.add_flag("--index", a.index,
               "single-file --check: index the compile database first, so callees defined in "
               "other files are costed from their bodies, as in the editor");
  app.add_option("--log", a.log_file, "log to FILE instead of stderr");
  app.add_flag("--verbose", a.verbose, "debug logging");
  app.add_flag_callback(
      "--color", [&a] { a.color = 1; },
      "ANSI colours in --check output (default: when a terminal)");
  app.add_flag_callback(
      "--no-color", [&a] { a.color = 0; }, "no ANSI colours in --check output");
  // What some clients pass by default; stdio is the only transport.
  app.add_flag("--stdio")->group("");
  perfhat::cli::parse(app, argc, argv);
  if (a.check_files.size() == 1 && a.compile_db.empty() && a.sarif.empty())
    a.check_file = a.check_files.front();  // the annotated single-file form
}

// The nearest directory at or above `dir` holding .perfhat.json, or `dir` itself.
std::string projectRoot(std::filesystem::path dir) {
  std::filesystem::path start = dir;
  for (; !dir.empty(); dir = dir.parent_path()) {
    std::error_code ec;
    if (std::filesystem::exists(dir / ".perfhat.json", ec)) return dir.string();
    if (dir == dir.parent_path()) break;
  }
  return start.string();
}

// --match-report: what a suite over a real code base counts (matched share, warnings).
void appendMatchReport(const std::string& path, const analysis::Snapshot& snap,
                       const features::Options& options) {
  std::ofstream out(path, std::ios::app);
  for (const auto& f : snap.functions) {
    json items = json::array();
    for (const auto& part : f.matched) items.push_back(part.key);
    json line = {
        {"file", snap.path},     {"key", f.key},
        {"mangled", f.mangled},  {"match", std::string(perfhat::features::matchKindName(f.match))},
        {"items", items},        {"line", f.range.start.line + 1},
        {"implicit", f.implicit}};
    out << line.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
  }
  int regressions = 0, possibly_new = 0, virtual_calls = 0, virtual_resolved = 0;
  int indirect_calls = 0, indirect_resolved = 0;
  for (const auto& f : snap.functions)
    for (const auto& n : f.nodes) {
      if (n.kind == analysis::NodeKind::Call && n.call.is_virtual) {
        ++virtual_calls;
        virtual_resolved += !n.call.implementations.empty();
      }
      if (n.kind == analysis::NodeKind::Call && n.call.indirect) {
        ++indirect_calls;
        indirect_resolved += !n.call.implementations.empty();
      }
    }
  for (const auto& d : features::diagnostics(snap, options)) {
    regressions += d.code == "perfhat.regression";
    possibly_new += d.code == "perfhat.possibly-new";
  }
  json summary = {{"file", snap.path},
                  {"functions", snap.functions.size()},
                  {"regressions", regressions},
                  {"possibly_new", possibly_new},
                  {"virtual_calls", virtual_calls},
                  {"virtual_resolved", virtual_resolved},
                  {"indirect_calls", indirect_calls},
                  {"indirect_resolved", indirect_resolved}};
  out << summary.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
}

// The working directory the server was started in (read before any parse changes it), which
// relative paths on the command line and in the environment are relative to.
std::string startDirectory() {
  static const std::string dir = [] {
    std::error_code ec;
    auto d = std::filesystem::current_path(ec);
    return ec ? std::string() : d.string();
  }();
  return dir;
}

// A `--check` run's settings: the project file of `root`, the environment, then the command line.
Config resolveCheckConfig(const std::string& root, const Args& a, Logger& log) {
  ConfigLayers layers;
  std::optional<std::string> project_error;
  layers.project = withAbsolutePaths(loadProjectFile(root, &project_error), root);
  if (project_error) log.warn(*project_error);
  layers.env =
      withAbsolutePaths(envLayer([](const char* k) { return std::getenv(k); }), startDirectory());
  layers.cli = withAbsolutePaths(a.cli, startDirectory());
  std::vector<std::string> warnings;
  Config cfg = layers.resolve(&warnings);
  for (const auto& w : warnings) log.warn(w);
  return cfg;
}

int runCheck(const Args& a, Logger& log) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path file = fs::absolute(a.check_file, ec);
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::cerr << "perfhat-lsp --check: cannot read " << a.check_file << "\n";
    return 1;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();

  std::string root = projectRoot(file.parent_path());
  Config cfg = resolveCheckConfig(root, a, log);

  SourceChoice choice = makeSource(cfg);
  std::shared_ptr<feedback::FeedbackProvider> provider = makeProvider(choice, cfg, log);

  ClangAnalyzer analyzer;
  analyzer.setBackgroundIndex(false);  // one file, analysed alone: the output never varies
  analyzer.configure(cfg, root);
  if (a.index)
    if (const std::string database = analyzer.indexDatabase(root); !database.empty())
      analyzer.indexNow(database, root);
  // The summary describes the cold run's lookup: the warm run is served from the cache (it
  // sends nothing to the source), so its numbers would say "0 keys requested".
  size_t keys_referenced = 0, keys_sent = 0, items = 0;
  int fetches = 0;
  std::string fetch_status = provider ? "ok" : "no feedback source configured";
  bool fetch_failed = false;  // the cold lookup's error (the warm run is served from the cache)
  FeedbackFetch fetch =
      [&](const std::vector<std::string>& keys) -> std::shared_ptr<const analysis::FeedbackView> {
    const bool cold = fetches++ == 0;
    if (cold) keys_referenced = keys.size();
    if (!provider) return std::make_shared<analysis::InMemoryFeedback>();
    feedback::Lookup l = provider->get(keys);
    if (cold) {
      keys_sent = l.requested_keys;
      items = l.items.size();
    }
    if (!l.error.empty()) {
      fetch_status = l.error;
      fetch_failed = fetch_failed || cold;
      log.warn("feedback: " + l.error);
    }
    return std::make_shared<analysis::InMemoryFeedback>(std::move(l.items), l.stale);
  };
  AnalysisInput input{file.string(), text, 1};
  std::vector<std::string> notes;
  auto t0 = std::chrono::steady_clock::now();
  analysis::SnapshotPtr snap = analyzer.analyze(input, fetch, notes);
  double total_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  // A second, warm run: the reparse an edit costs (preamble reused, feedback cached).
  input.version = 2;
  std::vector<std::string> ignored;
  auto t1 = std::chrono::steady_clock::now();
  analysis::SnapshotPtr warm = analyzer.analyze(input, fetch, ignored);
  double warm_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
  for (const auto& n : notes) log.warn(n);

  bool color = a.color == 1 || (a.color == -1 && isatty(STDOUT_FILENO));
  std::cout << features::annotateSource(text, *snap, cfg.features, color);
  size_t functions = snap->functions.size();
  std::printf("\n--- perfhat-lsp --check %s\n", file.c_str());
  std::printf("functions: %zu, parse problems: %zu%s\n", functions, snap->problems.size(),
              snap->stale ? ", feedback STALE (served from cache)" : "");
  if (choice.file) {
    std::printf("feedback: %s; %zu keys looked up in the dataset, %zu items (%s)\n",
                choice.source->describe().c_str(), keys_sent, items, fetch_status.c_str());
  } else {
    std::printf("feedback: %s; %zu keys, %zu requested in one bulk request, %zu items (%s)\n",
                choice.source ? choice.source->describe().c_str() : "none", keys_referenced,
                keys_sent, items, fetch_status.c_str());
  }
  std::printf(
      "cold: parse %.1f ms, fetch %.1f ms, deployed text %.1f ms, analysis %.1f ms, total %.1f "
      "ms\n",
      snap->parse_ms, snap->fetch_ms, snap->deployed_ms, snap->analysis_ms, total_ms);
  std::printf(
      "warm: reparse %.1f ms, fetch %.1f ms (cache), deployed text %.1f ms (cache), analysis %.1f "
      "ms, total %.1f ms\n",
      warm->parse_ms, warm->fetch_ms, warm->deployed_ms, warm->analysis_ms, warm_ms);
  if (!a.match_report.empty()) appendMatchReport(a.match_report, *snap, cfg.features);
  if (fetch_failed) {
    // A script gating on --check must not read "no production data" as "no regression".
    std::fflush(stdout);
    std::cerr << "perfhat-lsp --check: the feedback source failed (" << fetch_status
              << "); the annotations above carry no production data\n";
    return 2;
  }
  return 0;
}

int runCheckManyFromArgs(const Args& a, Logger& log) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path first = !a.check_files.empty() ? fs::absolute(a.check_files.front(), ec)
                                          : fs::absolute(a.compile_db, ec) / "x";
  std::string root = projectRoot(first.parent_path());
  Config cfg = resolveCheckConfig(root, a, log);
  return runCheckMany({a.check_files, a.compile_db, a.sarif, PERFHAT_VERSION}, cfg, root, log);
}

int runServer(const Args& a, Logger& log) {
  ConfigLayers layers;
  layers.env =
      withAbsolutePaths(envLayer([](const char* k) { return std::getenv(k); }), startDirectory());
  layers.cli = withAbsolutePaths(a.cli, startDirectory());
  lsp::FdTransport transport(STDIN_FILENO, STDOUT_FILENO);
  Server server(
      layers, std::make_unique<ClangAnalyzer>(),
      [&transport](const json& j) {
        // Replace invalid UTF-8 rather than throw: text from the file may be anything.
        transport.send(j.dump(-1, ' ', false, json::error_handler_t::replace));
      },
      log);
  log.info(std::string("perfhat-lsp ") + PERFHAT_VERSION + " listening on stdio");
  while (auto frame = transport.read()) {
    server.handle(*frame);
    if (server.exited()) break;
  }
  if (!server.exited()) log.info("input closed without exit; stopping");
  server.stop();
  return server.exited() ? server.exitCode() : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // a vanished client shows up as a failed write, not a kill
  parseOnCallingThread();         // before any thread: libclang parses on our large stacks
  Args args;
  parseArgs(argc, argv, args);
  // Before any thread starts (it sets TMPDIR), after the arguments (--help exits).
  perfhat::lsp::ProcessTempDir temp_dir;
  temp_dir.removeOnTerminationSignals();
  Logger log;
  if (args.verbose) log.setLevel(LogLevel::Debug);
  if (temp_dir.path().empty())
    log.warn("temporary files go to the default directory: " + temp_dir.error());
  if (temp_dir.sweptStale() > 0) {
    log.info("removed the temporary directories of " + std::to_string(temp_dir.sweptStale()) +
             " ended servers");
  }
  if (!args.log_file.empty() && !log.openFile(args.log_file)) {
    std::cerr << "perfhat-lsp: cannot open log file " << args.log_file << "; logging to stderr\n";
  }
  try {
    if (!args.check_file.empty()) {
      int rc = 1;
      runWithStack(analysisStackBytes(), [&] { rc = runCheck(args, log); });
      return rc;
    }
    if (!args.check_files.empty() || !args.compile_db.empty()) {
      int rc = 1;
      runWithStack(analysisStackBytes(), [&] { rc = runCheckManyFromArgs(args, log); });
      return rc;
    }
    return runServer(args, log);
  } catch (const std::exception& e) {
    log.error(std::string("fatal: ") + e.what());
    return 1;
  }
}
