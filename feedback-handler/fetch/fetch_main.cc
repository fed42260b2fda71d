// perfhat-fetch --handler URL [--token T] --compile-commands DIR|FILE [--dry-run] [--store PATH]
// (DESIGN §12).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/cli.h"
#include "feedback-handler/fetch/fetch.h"

#ifndef PERFHAT_VERSION
#define PERFHAT_VERSION "0.0.0"
#endif

namespace {

constexpr const char* kAbout =
    "Warms the local feedback cache for a whole project: enumerates every function with libclang,\n"
    "fetches their production feedback in bulk, and with --store pulls the handler's sketches\n"
    "into the local handler's SQLite store (use the local handler's --store path).";

}  // namespace

int main(int argc, char** argv) {
  perfhat::fetch::FetchOptions o;
  CLI::App app(kAbout, "perfhat-fetch");
  perfhat::cli::configure(app, PERFHAT_VERSION);
  app.add_option("--handler", o.handler,
                 "feedback handler (deployed or local), e.g. http://127.0.0.1:4318");
  app.add_option("--token", o.token, "bearer token (env PERFHAT_TOKEN)");
  app.add_option("--compile-commands", o.compile_commands,
                 "directory holding compile_commands.json, or the file itself");
  app.add_option("--store", o.store, "local handler store to fill (optional)");
  app.add_flag("--dry-run", o.dry_run, "enumerate functions only; no network");
  app.add_option("--batch-keys", o.batch_keys, "keys per batchGet call (default 2000)")
      ->check(perfhat::cli::positiveInteger());
  app.add_option("-j,--jobs", o.jobs, "parallel parsers (default: one per hardware thread)")
      ->check(perfhat::cli::positiveInteger());
  perfhat::cli::parse(app, argc, argv);
  auto usageError = [&app](const std::string& m) { perfhat::cli::usageError(app, m); };
  if (o.token.empty()) {
    if (const char* t = std::getenv("PERFHAT_TOKEN")) o.token = t;
  }
  if (o.compile_commands.empty()) usageError("--compile-commands is required");
  if (o.handler.empty() && !o.dry_run) usageError("--handler is required (or --dry-run)");
  while (!o.handler.empty() && o.handler.back() == '/') o.handler.pop_back();

  // A bar with counts, rate and time left on a terminal; one plain line per step otherwise.
  const bool tty = isatty(STDERR_FILENO);
  std::string phase;
  auto phase_start = std::chrono::steady_clock::now();
  auto progress = [&](size_t done, size_t total, const std::string& what) {
    const std::string now_phase = (what == "fetching" || what == "fetched") ? "fetch" : "parse";
    if (now_phase != phase) {
      phase = now_phase;
      phase_start = std::chrono::steady_clock::now();
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - phase_start).count();
    const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
    const double left = rate > 0 ? static_cast<double>(total - done) / rate : 0;
    const char* unit = phase == "parse" ? "files" : "batches";
    if (tty) {
      const int width = 30;
      int filled = total ? static_cast<int>(width * done / total) : width;
      std::fprintf(stderr, "\r%s [%.*s%*s] %zu/%zu %.1f %s/s ~%.0fs left %-32.32s", phase.c_str(),
                   filled, "##############################", width - filled, "", done, total, rate,
                   unit, left, what.c_str());
      if (done == total) std::fputc('\n', stderr);
    } else if (done > 0) {
      std::fprintf(stderr, "%s %zu/%zu (%.1f %s/s) %s\n", phase.c_str(), done, total, rate, unit,
                   what.c_str());
    }
  };
  try {
    auto s = perfhat::fetch::run(o, progress);
    for (const auto& e : s.errors) std::fprintf(stderr, "perfhat-fetch: warning: %s\n", e.c_str());
    std::printf("files: %zu (%zu failed)\nfunctions found: %zu\nkeys requested: %zu\n", s.files,
                s.files_failed, s.functions, s.keys);
    if (!o.dry_run) {
      std::printf("matched: %zu\nwith data: %zu\nbytes: %llu\n", s.matched, s.with_data,
                  static_cast<unsigned long long>(s.bytes));
      if (!o.store.empty()) {
        std::printf("rows stored: %llu (%s)\n", static_cast<unsigned long long>(s.rows_stored),
                    o.store.c_str());
      }
    }
    std::printf("parse: %.2f s wall, %.2f s CPU\ntime: %.2f s\n", s.parse_seconds,
                s.parse_cpu_seconds, s.seconds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "perfhat-fetch: %s\n", e.what());
    return 1;
  }
  return 0;
}
