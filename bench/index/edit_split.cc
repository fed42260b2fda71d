// index_bench split: the analyzer in this process, so that the edit's cost can be split by phase
// and compared with libclang's bare reparse on the same thread, in CPU time (bench/README.md
// "Workspace index").
#include "bench/index/edit_split.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "bench/index/middle_line_edit.h"
#include "bench/index/percentile.h"
#include "server/analysis/compile_db.h"
#include "server/analysis/feedback_view.h"
#include "server/index/indexer.h"
#include "server/server/clang_analyzer.h"
#include "server/server/thread_cpu.h"

namespace perfhat::bench {
namespace {

void line(const char* what, const std::vector<double>& v) {
  std::printf("  %-44s p50 %9.2f ms  p95 %9.2f ms  (n=%zu)\n", what, pct(v, 0.5), pct(v, 0.95),
              v.size());
}

}  // namespace

int runSplit(const std::string& db, const std::string& root, const std::string& file, int n,
             bool with_index) {
  setenv("LIBCLANG_NOTHREADS", "1", 1);  // libclang on this thread: its CPU clock covers it
  const auto edit = middleLineEdit(file);
  if (!edit) return 1;
  const std::string& original = edit->original;
  const std::string& with = edit->edited;
  std::printf("%s: %d lines\n", file.c_str(), edit->lines);

  server::Config cfg;
  cfg.compile_commands = std::filesystem::absolute(db).string();  // not relative to ROOT
  server::ClangAnalyzer analyzer;
  analyzer.setBackgroundIndex(false);
  analyzer.configure(cfg, root);
  if (with_index) {
    index::IndexStats st = analyzer.indexNow(db, root);
    std::printf("index: %zu parsed, %zu read back, %zu functions\n", st.parsed, st.reused,
                analyzer.workspaceIndex()->functionCount());
  }
  auto fetch = [](const std::vector<std::string>&) {
    return std::make_shared<analysis::InMemoryFeedback>();
  };
  auto cc = analysis::compileCommandFor(file, db, {});
  auto bare = analysis::TranslationUnit::parse(file, original, cc.args).value;
  std::vector<std::string> warnings;
  auto first = analyzer.analyze({file, original, 1}, fetch, warnings);
  const bool keep_snapshot = std::getenv("INDEX_BENCH_KEEP_SNAPSHOT") != nullptr;
  analysis::SnapshotPtr kept = keep_snapshot ? first : nullptr;
  for (const auto& w : warnings) std::printf("warning: %s\n", w.c_str());
  size_t errors = 0;
  for (const auto& p : first->problems) errors += p.error;
  std::printf("first build: %zu functions, %zu problems (%zu errors)\n", first->functions.size(),
              first->problems.size(), errors);
  for (const auto& p : first->problems)
    if (p.error) {
      std::printf("  first error: %s\n", p.message.c_str());
      break;
    }
  std::vector<double> bare_cpu, edit_cpu, parse, parse_cpu, key, walk, augment, infer, after,
      header_walked;
  int reused = 0;
  std::vector<double> main_reused, main_walked, implicit_reused, inferred, inference_reused;
  std::string all_inferred_because;
  for (int i = 1; i <= n; ++i) {
    const std::string& t = i % 2 ? with : original;
    double c0 = server::threadCpuMs();
    bare->reparse(t);
    bare_cpu.push_back(server::threadCpuMs() - c0);
    c0 = server::threadCpuMs();
    // The server keeps the latest snapshot until the next build has replaced it.
    analysis::SnapshotPtr snap = analyzer.analyze({file, t, i + 1}, fetch, warnings);
    if (keep_snapshot) kept = std::move(snap);
    const auto& s = analyzer.lastSplit();
    edit_cpu.push_back(server::threadCpuMs() - c0 + s.parse_thread_cpu);
    parse.push_back(s.parse);
    parse_cpu.push_back(s.parse_cpu);
    key.push_back(analyzer.lastHeaderBodies(file).key_ms);
    walk.push_back(s.walk);
    augment.push_back(s.augment);
    infer.push_back(s.infer);
    after.push_back(s.after);
    const auto h = analyzer.lastHeaderBodies(file);
    reused += h.reused;
    header_walked.push_back(static_cast<double>(h.header_walked));
    main_reused.push_back(static_cast<double>(h.main_reused));
    main_walked.push_back(static_cast<double>(h.main_walked));
    implicit_reused.push_back(static_cast<double>(h.main_implicit_reused));
    const auto inf = analyzer.lastInference(file);
    inferred.push_back(static_cast<double>(inf.analysed));
    inference_reused.push_back(static_cast<double>(inf.reused));
    if (inf.all_analysed_because != analysis::NoReuse::None)
      all_inferred_because = server::noReuseText(inf.all_analysed_because);
  }
  std::printf("edits: %d, header bodies reused in %d; header bodies per unit %zu\n", n, reused,
              analyzer.lastHeaderBodies(file).header_bodies);
  line("bare reparse, CPU", bare_cpu);
  line("analyze() after the edit, CPU", edit_cpu);
  std::printf("  ratio analyze ÷ bare reparse, CPU: p50 %.3f, p95 %.3f\n",
              pct(edit_cpu, 0.5) / pct(bare_cpu, 0.5), pct(edit_cpu, 0.95) / pct(bare_cpu, 0.95));
  std::printf(" split of analyze() (reparse wall, the rest CPU):\n");
  line("libclang reparse", parse);
  line("libclang reparse, CPU", parse_cpu);
  line("AST walk (header key included), CPU", walk);
  line("  of which the header key", key);
  line("workspace index bodies (augment)", augment);
  line("inference", infer);
  line("after (index setOpen, changed callees)", after);
  std::printf(
      "  header definitions walked: p50 %.0f; main-file definitions walked p50 %.0f, "
      "reused p50 %.0f; classes whose implicit members were reused p50 %.0f\n",
      pct(header_walked, 0.5), pct(main_walked, 0.5), pct(main_reused, 0.5),
      pct(implicit_reused, 0.5));
  std::printf("  functions inferred p50 %.0f, their last inference reused p50 %.0f%s%s\n",
              pct(inferred, 0.5), pct(inference_reused, 0.5),
              all_inferred_because.empty() ? "" : "; once all inferred because: ",
              all_inferred_because.c_str());
  return 0;
}

}  // namespace perfhat::bench
