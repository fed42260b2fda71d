#include "experiment/overhead.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "experiment/boxplot.h"
#include "experiment/commands.h"
#include "experiment/lsp_child.h"
#include "experiment/measurements.h"

namespace perfhat::experiment {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr auto kPerFileTimeout = std::chrono::minutes(5);

std::string uriOf(const std::string& path) { return "file://" + path; }

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A started and initialized server, its workspace the compile database's folder. Without the
// cache the server is started through env(1) with a cache of zero entries (the LRU then stores
// nothing, so every lookup asks the source).
std::unique_ptr<LspChild> startServer(const OverheadOptions& o, const std::string& root,
                                      bool cache) {
  std::vector<std::string> command = o.server;
  if (!cache) command.insert(command.begin(), {"env", "PERFHAT_CACHE_MAX_ENTRIES=0"});
  auto s = std::make_unique<LspChild>(command, "");
  const int id = s->request(
      "initialize",
      {{"processId", nullptr}, {"rootUri", uriOf(root)}, {"capabilities", json::object()}});
  if (!s->take([id](const json& m) { return m.value("id", -1) == id; }, std::chrono::minutes(2))) {
    throw std::runtime_error("the language server did not answer initialize");
  }
  s->notify("initialized", json::object());
  return s;
}

// Opens (or changes) every file with `version` and waits for their diagnostics.
void analyse(LspChild& s, const std::vector<std::string>& files, int version, bool change) {
  for (const auto& f : files) {
    std::string text = slurp(f);
    if (change) {
      text += "\n// edit " + std::to_string(version) + "\n";
      s.notify("textDocument/didChange",
               {{"textDocument", {{"uri", uriOf(f)}, {"version", version}}},
                {"contentChanges", json::array({{{"text", text}}})}});
    } else {
      s.notify(
          "textDocument/didOpen",
          {{"textDocument",
            {{"uri", uriOf(f)}, {"languageId", "cpp"}, {"version", version}, {"text", text}}}});
    }
  }
  for (const auto& f : files) {
    const std::string uri = uriOf(f);
    auto got = s.take(
        [&](const json& m) {
          return m.value("method", "") == "textDocument/publishDiagnostics" &&
                 m["params"].value("uri", "") == uri &&
                 m["params"].value("version", version) == version;
        },
        kPerFileTimeout);
    if (!got) throw std::runtime_error("no diagnostics for " + f);
  }
}

void closeAll(LspChild& s, const std::vector<std::string>& files) {
  for (const auto& f : files) {
    s.notify("textDocument/didClose", {{"textDocument", {{"uri", uriOf(f)}}}});
  }
}

json summary(std::vector<double> xs) {
  const BoxStats b = boxStats(xs);
  std::sort(xs.begin(), xs.end());
  return {
      {"median", b.median}, {"q1", b.q1}, {"q3", b.q3}, {"min", xs.front()}, {"max", xs.back()}};
}

}  // namespace

std::vector<std::string> overheadScenarios(bool with_no_cache) {
  std::vector<std::string> out;
  for (const char* suffix : {"", "_nocache"}) {
    if (*suffix && !with_no_cache) break;
    for (const char* k : {"full_cold", "full_warm", "single_cold", "single_warm"}) {
      out.push_back(k + std::string(suffix));
    }
  }
  return out;
}

std::vector<std::string> compileDatabaseFiles(const std::string& path) {
  fs::path db = path;
  if (fs::is_directory(db)) db /= "compile_commands.json";
  json entries;
  try {
    entries = json::parse(readBoundedFile(db.string()));
  } catch (const json::exception& e) {
    throw InputError(db.string() + ": " + e.what());
  }
  std::vector<std::string> files;
  std::set<std::string> seen;
  for (const auto& e : entries) {
    fs::path f = e.value("file", "");
    if (f.is_relative()) f = fs::path(e.value("directory", "")) / f;
    f = f.lexically_normal();
    if (fs::is_regular_file(f) && seen.insert(f.string()).second) files.push_back(f.string());
  }
  if (files.empty()) throw InputError(db.string() + ": no existing files");
  return files;
}

json measureOverhead(const OverheadOptions& o, std::ostream& progress) {
  const auto files = compileDatabaseFiles(o.compile_commands);
  const std::string single =
      o.file.empty() ? files.front() : fs::absolute(o.file).lexically_normal().string();
  const std::string root = fs::path(files.front()).parent_path().string();
  const int full_repeat = o.full_repeat < 0 ? o.repeat : o.full_repeat;
  std::map<std::string, std::vector<double>> seconds, cpu;
  for (const std::string& k : overheadScenarios(o.with_no_cache)) seconds[k], cpu[k];
  std::vector<bool> modes{true};
  if (o.with_no_cache) modes.push_back(false);
  auto fmt = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3f s", v);
    return std::string(b);
  };
  auto resultJson = [&] {
    json out{{"name", o.name},     {"files", files.size()},      {"single_file", single},
             {"repeat", o.repeat}, {"full_repeat", full_repeat}, {"seconds", seconds},
             {"cpu_seconds", cpu}, {"summary", json::object()},  {"cpu_summary", json::object()}};
    for (const auto& [k, v] : seconds) {
      if (!v.empty()) out["summary"][k] = summary(v);
    }
    for (const auto& [k, v] : cpu) {
      if (!v.empty()) out["cpu_summary"][k] = summary(v);
    }
    return out;
  };
  // What is measured so far survives an interruption: written after every scenario (one cold
  // full-project pass of a large tree is many CPU-minutes).
  auto saveSoFar = [&] {
    if (o.out_dir.empty()) return;
    fs::create_directories(o.out_dir);
    std::ofstream(fs::path(o.out_dir) / "overhead.json") << resultJson().dump(2) << "\n";
  };
  for (int i = 1; i <= std::max(o.repeat, full_repeat); ++i) {
    for (const bool cache : modes) {
      const std::string suffix = cache ? "" : "_nocache";
      // One scenario: a fresh server analyses `scope` cold, then again warm (the full project
      // reopened after closing every file; the single file changed in place). Records both
      // and says them on the progress line.
      auto coldWarm = [&](const std::string& scenario, const std::vector<std::string>& scope,
                          bool reopen) {
        const std::string cold = scenario + "_cold" + suffix, warm = scenario + "_warm" + suffix;
        auto t0 = Clock::now();
        auto s = startServer(o, root, cache);
        analyse(*s, scope, 1, false);
        seconds[cold].push_back(secondsSince(t0));
        cpu[cold].push_back(s->cpuSeconds());
        saveSoFar();
        // The warm pass is charged from here: what the server did while the file was written
        // (a cold start's background work) is neither pass's.
        if (reopen) closeAll(*s, scope);
        const double c0 = s->cpuSeconds();
        t0 = Clock::now();
        analyse(*s, scope, 2, !reopen);
        seconds[warm].push_back(secondsSince(t0));
        cpu[warm].push_back(s->cpuSeconds() - c0);
        saveSoFar();
        return " " + scenario + " cold " + fmt(seconds[cold].back()) + " (cpu " +
               fmt(cpu[cold].back()) + "), warm " + fmt(seconds[warm].back()) + " (cpu " +
               fmt(cpu[warm].back()) + ")";
      };
      std::string line;
      if (i <= full_repeat) {
        progress << "[" << o.name << " " << i << "/" << full_repeat << "] full project, "
                 << (cache ? "cache" : "no cache") << ": " << files.size() << " files..."
                 << std::endl;
        line += coldWarm("full", files, true) + ";";
      }
      if (i <= o.repeat) line += coldWarm("single", {single}, false);
      progress << "[" << o.name << " " << i << "/" << std::max(o.repeat, full_repeat) << ", "
               << (cache ? "cache" : "no cache") << "]" << line << std::endl;
    }
  }
  return resultJson();
}

int runOverhead(const OverheadOptions& o, std::ostream& out) {
  if (o.repeat < 1) throw InputError("--repeat must be at least 1");
  if (o.full_repeat < -1) throw InputError("--full-repeat must be 0 (skip) or more");
  const json result = measureOverhead(o, std::cerr);
  fs::create_directories(o.out_dir);
  std::ofstream(fs::path(o.out_dir) / "overhead.json") << result.dump(2) << "\n";
  const auto scenarios = overheadScenarios(o.with_no_cache);
  std::vector<BoxCategory> cats;
  for (const auto& k : scenarios) {
    if (result["summary"].contains(k)) {
      cats.push_back({k,
                      {result["seconds"][k].get<std::vector<double>>(),
                       result["cpu_seconds"][k].get<std::vector<double>>()}});
    }
  }
  std::ofstream(fs::path(o.out_dir) / "overhead.svg")
      << boxPlotSvg("perfhat-lsp analysis time: " + o.name,
                    {{"wall seconds", "#1f77b4"}, {"server CPU seconds", "#ff7f0e"}}, cats);
  out << "| " << o.name << " (" << result["files"]
      << " files) | n | wall median | q1 | q3 | min | max | CPU median | CPU q1 | CPU q3 |\n"
      << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  char line[320];
  for (const auto& k : scenarios) {
    if (!result["summary"].contains(k)) continue;
    const json& s = result["summary"][k];
    const json& c = result["cpu_summary"][k];
    std::snprintf(
        line, sizeof line, "| %s | %zu | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n",
        k.c_str(), result["seconds"][k].size(), s["median"].get<double>(), s["q1"].get<double>(),
        s["q3"].get<double>(), s["min"].get<double>(), s["max"].get<double>(),
        c["median"].get<double>(), c["q1"].get<double>(), c["q3"].get<double>());
    out << line;
  }
  out << "(seconds; " << (fs::path(o.out_dir) / "overhead.json").string() << ", overhead.svg)\n";
  return 0;
}

}  // namespace perfhat::experiment
