#include "feedback-handler/fetch/fetch.h"

#include <httplib.h>

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "common/feedback.h"
#include "feedback-handler/store/store.h"
#include "feedback-handler/sync/syncer.h"
#include "server/analysis/ast_builder.h"
#include "server/analysis/compile_db.h"
#include "server/analysis/translation_unit.h"

namespace perfhat::fetch {
namespace fs = std::filesystem;

std::vector<std::string> projectFiles(const std::string& compile_commands) {
  fs::path db = compile_commands;
  if (fs::is_directory(db)) db /= "compile_commands.json";
  // The shared cache: the lookups for each file below then find it parsed.
  auto parsed = analysis::cachedCompileDatabase(db.string());
  if (!parsed->error().empty()) throw std::runtime_error("compile database " + parsed->error());
  return parsed->files();
}

namespace {

// What one translation unit contributes to the enumeration.
struct FileResult {
  std::vector<std::string> functions, keys;
  std::string error;  // non-empty: the file could not be read or parsed
};

FileResult enumerateFile(const std::string& file, const analysis::AnalysisOptions& aopts) {
  FileResult r;
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    r.error = "cannot read " + file;
    return r;
  }
  std::stringstream text;
  text << in.rdbuf();
  analysis::CompileCommand cc =
      analysis::compileCommandFor(file, aopts.compile_commands, aopts.fallback_flags);
  // One-shot parse: no precompiled preamble, since nothing is reparsed.
  auto tu = analysis::TranslationUnit::parse(file, text.str(), cc.args,
                                             analysis::TranslationUnit::Mode::kOneShot);
  if (!tu) {
    r.error = "cannot parse " + file + ": " + tu.error;
    return r;
  }
  analysis::ParsedUnit unit = analysis::buildAst(*tu.value, aopts);
  for (const auto& f : unit.functions) r.functions.push_back(f.key);
  r.keys = analysis::referencedKeys(unit);
  return r;
}

double processCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

}  // namespace

size_t defaultJobs() { return std::max(1u, std::thread::hardware_concurrency()); }

FetchSummary run(const FetchOptions& o, const Progress& progress) {
  auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = processCpuSeconds();
  FetchSummary sum;
  std::vector<std::string> files = projectFiles(o.compile_commands);
  sum.files = files.size();

  // Parse in parallel: each worker takes the next file; libclang is thread-safe across
  // translation units with their own index (TranslationUnit::parse makes one per unit).
  std::set<std::string> functions, keys;
  analysis::AnalysisOptions aopts;
  aopts.compile_commands = o.compile_commands;
  std::atomic<size_t> next{0};
  std::mutex mu;  // guards functions, keys, sum and the progress callback
  size_t done = 0;
  auto worker = [&] {
    for (size_t i = next++; i < files.size(); i = next++) {
      FileResult r = enumerateFile(files[i], aopts);
      std::lock_guard<std::mutex> lock(mu);
      if (!r.error.empty()) {
        ++sum.files_failed;
        sum.errors.push_back(std::move(r.error));
      }
      functions.insert(r.functions.begin(), r.functions.end());
      keys.insert(r.keys.begin(), r.keys.end());
      ++done;
      if (progress) progress(done, files.size(), files[i]);
    }
  };
  const size_t jobs =
      std::clamp<size_t>(o.jobs ? o.jobs : defaultJobs(), 1, std::max<size_t>(files.size(), 1));
  if (progress) progress(0, files.size(), "parsing");
  std::vector<std::thread> pool;
  for (size_t j = 1; j < jobs; ++j) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  sum.functions = functions.size();
  sum.keys = keys.size();
  sum.parse_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  sum.parse_cpu_seconds = processCpuSeconds() - cpu0;
  if (o.dry_run) {
    sum.seconds = sum.parse_seconds;
    return sum;
  }

  // Local store first (exact sketches, cursor-based), so the report below reflects it.
  if (!o.store.empty()) {
    handler::StoreOptions so;
    so.path = o.store;
    handler::Store store(so);
    handler::Syncer syncer(store, {handler::Upstream{o.handler, o.token}}, {});
    for (const auto& st : syncer.syncNow()) {
      if (!st.ok) throw std::runtime_error("pull from " + st.url + " failed: " + st.last_error);
      sum.rows_stored += st.rows_pulled;
    }
  }

  httplib::Client cli(o.handler);
  cli.set_tcp_nodelay(true);  // no delayed-ACK wait between header and body writes
  cli.set_connection_timeout(std::chrono::seconds(10));
  cli.set_read_timeout(std::chrono::seconds(60));
  if (!o.token.empty()) cli.set_bearer_token_auth(o.token.c_str());
  std::vector<std::string> all(keys.begin(), keys.end());
  const size_t batches = (all.size() + o.batch_keys - 1) / std::max<size_t>(o.batch_keys, 1);
  for (size_t b = 0; b < batches; ++b) {
    if (progress) progress(b, batches, "fetching");
    BatchGetRequest req;
    auto first = all.begin() + static_cast<std::ptrdiff_t>(b * o.batch_keys);
    auto last =
        all.begin() + static_cast<std::ptrdiff_t>(std::min(all.size(), (b + 1) * o.batch_keys));
    req.keys.assign(first, last);
    auto res = cli.Post("/v1/feedback:batchGet", serialize(req), "application/json");
    if (!res)
      throw std::runtime_error("handler " + o.handler +
                               " unreachable: " + httplib::to_string(res.error()));
    if (res->status != 200) {
      throw std::runtime_error("handler answered HTTP " + std::to_string(res->status) + ": " +
                               res->body.substr(0, 300));
    }
    sum.bytes += res->body.size();
    BatchGetResponse r = parseBatchGetResponse(res->body);
    sum.matched += r.items.size();
    for (const auto& item : r.items) sum.with_data += item.stats ? 1 : 0;
  }
  if (progress) progress(batches, batches, "fetched");
  sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return sum;
}

}  // namespace perfhat::fetch
