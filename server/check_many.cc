#include "server/check_many.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "server/analysis/compile_db.h"
#include "server/feedback/provider.h"
#include "server/index/indexer.h"
#include "server/sarif.h"
#include "server/server/clang_analyzer.h"
#include "server/server/sources.h"

namespace perfhat::server {
namespace {

namespace fs = std::filesystem;

std::string databaseFile(const std::string& given) {
  std::error_code ec;
  fs::path p = fs::absolute(given, ec);
  if (fs::is_directory(p, ec)) p /= "compile_commands.json";
  return p.lexically_normal().string();
}

}  // namespace

int runCheckMany(const CheckManyArgs& a, const Config& cfg, const std::string& root, Logger& log) {
  std::vector<std::string> files;
  std::set<std::string> seen;
  auto add = [&](const std::string& f) {
    std::error_code ec;
    std::string abs = fs::absolute(f, ec).lexically_normal().string();
    if (seen.insert(abs).second) files.push_back(abs);
  };
  for (const auto& f : a.files) add(f);
  std::string database;
  if (!a.compile_db.empty()) {
    database = databaseFile(a.compile_db);
    auto db = analysis::cachedCompileDatabase(database);
    if (!db->error().empty() || db->size() == 0) {
      std::cerr << "perfhat-lsp --check: cannot use " << database << ": "
                << (db->error().empty() ? "no entries" : db->error()) << "\n";
      return 1;
    }
    for (const auto& f : db->files()) add(f);
  } else if (!files.empty()) {
    database = analysis::findCompileDatabase(files.front(), cfg.compile_commands);
  }

  SourceChoice choice = makeSource(cfg);
  std::shared_ptr<feedback::FeedbackProvider> provider = makeProvider(choice, cfg, log);

  ClangAnalyzer analyzer;
  analyzer.setBackgroundIndex(false);
  analyzer.configure(cfg, root);
  auto t0 = std::chrono::steady_clock::now();
  index::IndexStats istats;
  if (!database.empty()) istats = analyzer.indexNow(database, root);

  bool fetch_failed = false, unreadable = false;
  std::string fetch_error;
  FeedbackFetch fetch =
      [&](const std::vector<std::string>& keys) -> std::shared_ptr<const analysis::FeedbackView> {
    if (!provider) return std::make_shared<analysis::InMemoryFeedback>();
    feedback::Lookup l = provider->get(keys);
    if (!l.error.empty()) {
      fetch_failed = true;
      fetch_error = l.error;
    }
    return std::make_shared<analysis::InMemoryFeedback>(std::move(l.items), l.stale);
  };

  std::vector<SarifFile> sarif;
  int total_regressions = 0, total_possible = 0, total_improvements = 0;
  for (const auto& file : files) {
    std::optional<std::string> text = index::readFile(file);
    if (!text) {
      std::printf("%s: cannot read\n", file.c_str());
      unreadable = true;
      continue;
    }
    std::vector<std::string> notes;
    analysis::SnapshotPtr snap = analyzer.analyze({file, *text, 1}, fetch, notes);
    for (const auto& n : notes) log.warn(file + ": " + n);
    std::vector<features::Diagnostic> diags = features::diagnostics(*snap, cfg.features);
    int regressions = 0, possible = 0, improvements = 0;
    for (const auto& d : diags) {
      regressions += d.code == "perfhat.regression";
      possible += d.code == "perfhat.possible-regression";
      improvements += d.code == "perfhat.improvement";
    }
    size_t errors = 0;
    for (const auto& p : snap->problems) errors += p.error;
    std::printf(
        "%s: %zu functions, %d regressions, %d possible regressions, %d improvements, "
        "%zu parse errors\n",
        file.c_str(), snap->functions.size(), regressions, possible, improvements, errors);
    total_regressions += regressions;
    total_possible += possible;
    total_improvements += improvements;
    sarif.push_back({file, std::move(diags)});
  }
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "--- perfhat-lsp --check: %zu files, %d regressions, %d possible regressions, %d "
      "improvements in %.0f ms; index %s: %zu files (%zu parsed, %zu unchanged, %zu failed), "
      "%zu functions\n",
      files.size(), total_regressions, total_possible, total_improvements, ms,
      database.empty() ? "none" : database.c_str(), istats.files, istats.parsed, istats.reused,
      istats.failed, istats.functions);
  std::fflush(stdout);
  if (!a.sarif.empty()) {
    std::ofstream out(a.sarif, std::ios::trunc);
    out << toSarif(sarif, a.version).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
    if (!out) {
      std::cerr << "perfhat-lsp --check: cannot write " << a.sarif << "\n";
      return 1;
    }
  }
  if (unreadable) return 1;
  if (fetch_failed) {
    std::cerr << "perfhat-lsp --check: the feedback source failed (" << fetch_error
              << "); the results above carry no production data\n";
    return 2;
  }
  return total_regressions > 0 ? 3 : 0;
}

}  // namespace perfhat::server
