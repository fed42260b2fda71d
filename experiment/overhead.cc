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

// A started and initialized server, its workspace the compile database's folder.
std::unique_ptr<LspChild> startServer(const OverheadOptions& o, const std::string& root) {
  auto s = std::make_unique<LspChild>(o.server, "");
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
  std::map<std::string, std::vector<double>> seconds;
  for (int i = 1; i <= o.repeat; ++i) {
    {
      auto t0 = Clock::now();
      auto s = startServer(o, root);
      analyse(*s, files, 1, false);
      seconds["full_cold"].push_back(secondsSince(t0));
      closeAll(*s, files);
      t0 = Clock::now();
      analyse(*s, files, 2, false);
      seconds["full_warm"].push_back(secondsSince(t0));
    }
    {
      auto t0 = Clock::now();
      auto s = startServer(o, root);
      analyse(*s, {single}, 1, false);
      seconds["single_cold"].push_back(secondsSince(t0));
      t0 = Clock::now();
      analyse(*s, {single}, 2, true);
      seconds["single_warm"].push_back(secondsSince(t0));
    }
    progress << "[" << o.name << " " << i << "/" << o.repeat << "] full cold "
             << seconds["full_cold"].back() << " s, warm " << seconds["full_warm"].back()
             << " s; single cold " << seconds["single_cold"].back() << " s, warm "
             << seconds["single_warm"].back() << " s" << std::endl;
  }
  json out{{"name", o.name},     {"files", files.size()}, {"single_file", single},
           {"repeat", o.repeat}, {"seconds", seconds},    {"summary", json::object()}};
  for (const auto& [k, v] : seconds) out["summary"][k] = summary(v);
  return out;
}

int runOverhead(const OverheadOptions& o, std::ostream& out) {
  if (o.repeat < 1) throw InputError("--repeat must be at least 1");
  const json result = measureOverhead(o, std::cerr);
  fs::create_directories(o.out_dir);
  std::ofstream(fs::path(o.out_dir) / "overhead.json") << result.dump(2) << "\n";
  std::vector<BoxCategory> cats;
  for (const char* k : {"full_cold", "full_warm", "single_cold", "single_warm"}) {
    cats.push_back({k, {result["seconds"][k].get<std::vector<double>>()}});
  }
  std::ofstream(fs::path(o.out_dir) / "overhead.svg")
      << boxPlotSvg("perfhat-lsp analysis time: " + o.name, {{"seconds", "#1f77b4"}}, cats);
  out << "| " << o.name << " (" << result["files"] << " files) | median | q1 | q3 | min | max |\n"
      << "|---|---:|---:|---:|---:|---:|\n";
  char line[200];
  for (const char* k : {"full_cold", "full_warm", "single_cold", "single_warm"}) {
    const json& s = result["summary"][k];
    std::snprintf(line, sizeof line, "| %s | %.3f | %.3f | %.3f | %.3f | %.3f |\n", k,
                  s["median"].get<double>(), s["q1"].get<double>(), s["q3"].get<double>(),
                  s["min"].get<double>(), s["max"].get<double>());
    out << line;
  }
  out << "(seconds; " << (fs::path(o.out_dir) / "overhead.json").string() << ", overhead.svg)\n";
  return 0;
}

}  // namespace perfhat::experiment
