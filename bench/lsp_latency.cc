// Whole-process LSP latency: the real perfhat-lsp binary over pipes, a generated ~2,000-line
// C++ file with production data for every callee. Measures warm textDocument/inlayHint (whole
// file) and textDocument/hover round trips, and, in the same run, the edit → publishDiagnostics
// time (reparse + fetch from cache + analysis, debounce set to 0) that bounds how fast hints
// follow an edit. Usage: lsp_latency PERFHAT_LSP [iterations]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/cli.h"
#include "tests/integration/lsp_client.h"

using nlohmann::json;
using perfhat::testing::LspProcess;
using Clock = std::chrono::steady_clock;

namespace {

struct Generated {
  std::string text;
  json feedback;
  std::vector<std::pair<int, int>> hover_points;  // (line, column) on calls
};

// N services with M methods each; every method calls two others, one inside a loop.
Generated generate(int services, int methods) {
  Generated g;
  std::ostringstream out;
  json items = json::array();
  int line = 0;
  auto emit = [&](const std::string& s) {
    out << s << "\n";
    ++line;
  };
  emit("namespace bench {");
  for (int s = 0; s < services; ++s) {
    emit("class Service" + std::to_string(s) + " {");
    emit(" public:");
    for (int m = 0; m < methods; ++m) emit("  int m" + std::to_string(m) + "(int n) const;");
    emit("};");
  }
  for (int s = 0; s < services; ++s) {
    std::string cls = "Service" + std::to_string(s);
    for (int m = 0; m < methods; ++m) {
      std::string qualified = cls + "::m" + std::to_string(m);
      std::string a = "m" + std::to_string((m + 1) % methods);
      std::string b = "m" + std::to_string((m + 2) % methods);
      emit("int " + qualified + "(int n) const {");
      emit("  int r = " + a + "(n);");
      g.hover_points.push_back({line - 1, 11});
      emit("  for (int i = 0; i < 8; ++i) {");
      emit("    r += " + b + "(i);");
      emit("  }");
      emit("  return r;");
      emit("}");
      double p50 = 1e4 * (1 + (s * methods + m) % 17);
      items.push_back({{"key", "bench::" + qualified + "(int) const"},
                       {"stats",
                        {{"count", 1000},
                         {"mean_ns", p50 * 1.1},
                         {"p50_ns", p50},
                         {"p90_ns", p50 * 2},
                         {"p95_ns", p50 * 2.5},
                         {"p99_ns", p50 * 4}}}});
    }
  }
  emit("}  // namespace bench");
  g.text = out.str();
  g.feedback = {{"items", items}};
  return g;
}

struct Summary {
  double p50, p95, max, mean;
};

Summary summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  return {v[v.size() / 2], v[std::min(v.size() - 1, v.size() * 95 / 100)], v.back(),
          sum / v.size()};
}

void print(const char* what, const Summary& s, size_t n) {
  std::printf("| %-40s | %5zu | %8.3f | %8.3f | %8.3f | %8.3f |\n", what, n, s.p50, s.p95, s.mean,
              s.max);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Latency of perfhat-lsp's requests on a generated 2,200-line file, over pipes.",
               "lsp_latency");
  perfhat::cli::configure(app, "0.1.0");
  std::string lsp_binary;
  int iterations = 200;
  app.add_option("PERFHAT_LSP", lsp_binary, "the perfhat-lsp binary to measure")->required();
  app.add_option("iterations", iterations, "requests per measured row")
      ->check(perfhat::cli::positiveInteger())
      ->capture_default_str();
  perfhat::cli::parse(app, argc, argv);
  char tmpl[] = "/tmp/perfhat-lsp-latency-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  Generated g = generate(40, 7);  // 40 × (7 decl + 7 × 7 def + 4) ≈ 2,200 lines
  std::string src = dir + "/big.cc";
  std::ofstream(src) << g.text;
  std::ofstream(dir + "/feedback.json") << g.feedback.dump();
  std::ofstream(dir + "/compile_commands.json")
      << json::array({{{"directory", dir}, {"file", src}, {"command", "c++ -std=c++20 -c big.cc"}}})
             .dump();
  int lines = static_cast<int>(std::count(g.text.begin(), g.text.end(), '\n'));

  LspProcess p(lsp_binary, {"--feedback-file", dir + "/feedback.json"}, dir + "/server.log");
  std::string uri = "file://" + src;
  p.call("initialize", {{"rootUri", "file://" + dir},
                        {"initializationOptions", {{"debounce", {{"minMs", 0}, {"maxMs", 0}}}}},
                        {"capabilities", {{"textDocument", {{"inlayHint", json::object()}}}}}});
  p.notify("initialized", json::object());
  auto t_open = Clock::now();
  p.notify(
      "textDocument/didOpen",
      {{"textDocument", {{"uri", uri}, {"languageId", "cpp"}, {"version", 1}, {"text", g.text}}}});
  size_t cursor = 0;
  auto diag_for = [&](int version) {
    return p.waitFor(
        [&](const json& m) {
          return m.value("method", "") == "textDocument/publishDiagnostics" &&
                 m["params"].value("version", -1) == version;
        },
        std::chrono::seconds(120), &cursor);
  };
  if (!diag_for(1)) {
    std::fprintf(stderr, "no diagnostics after open\n");
    return 1;
  }
  double open_ms = std::chrono::duration<double, std::milli>(Clock::now() - t_open).count();

  json range = {{"start", {{"line", 0}, {"character", 0}}},
                {"end", {{"line", lines + 1}, {"character", 0}}}};
  size_t hint_count = 0;
  std::vector<double> inlay, hover, edit;
  for (int i = 0; i < iterations; ++i) {
    auto t0 = Clock::now();
    auto r = p.call("textDocument/inlayHint", {{"textDocument", {{"uri", uri}}}, {"range", range}});
    inlay.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (r && (*r)["result"].is_array()) hint_count = (*r)["result"].size();
  }
  // What an editor asks for: the visible ~60 lines, scrolled through the file.
  std::vector<double> viewport;
  for (int i = 0; i < iterations; ++i) {
    int first = (i * 53) % std::max(1, lines - 60);
    json vr = {{"start", {{"line", first}, {"character", 0}}},
               {"end", {{"line", first + 60}, {"character", 0}}}};
    auto t0 = Clock::now();
    p.call("textDocument/inlayHint", {{"textDocument", {{"uri", uri}}}, {"range", vr}});
    viewport.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  for (int i = 0; i < iterations; ++i) {
    auto [l, c] = g.hover_points[i % g.hover_points.size()];
    auto t0 = Clock::now();
    p.call("textDocument/hover",
           {{"textDocument", {{"uri", uri}}}, {"position", {{"line", l}, {"character", c}}}});
    hover.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  // Edits: change a constant in a loop bound (alternating), wait for the re-published diagnostics.
  int edits = std::max(10, iterations / 10);
  int loop_line = 0;
  {
    std::istringstream in(g.text);
    std::string l;
    for (int i = 0; std::getline(in, l); ++i) {
      if (l.find("i < 8") != std::string::npos) {
        loop_line = i;
        break;
      }
    }
  }
  for (int i = 0; i < edits; ++i) {
    int version = i + 2;
    json change = {{"range",
                    {{"start", {{"line", loop_line}, {"character", 22}}},
                     {"end", {{"line", loop_line}, {"character", 23}}}}},
                   {"text", i % 2 ? "8" : "9"}};
    auto t0 = Clock::now();
    p.notify("textDocument/didChange", {{"textDocument", {{"uri", uri}, {"version", version}}},
                                        {"contentChanges", json::array({change})}});
    if (!diag_for(version)) {
      std::fprintf(stderr, "no diagnostics for version %d\n", version);
      return 1;
    }
    edit.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  // Warm requests right after the edits (snapshot current): same as before.
  p.shutdownAndWait();

  std::printf("file: %d lines, %zu functions, %zu inlay hints per whole-file request\n", lines,
              g.hover_points.size(), hint_count);
  std::printf("cold open → first diagnostics: %.1f ms (parse + fetch + analysis)\n\n", open_ms);
  std::printf("| %-40s | %5s | %8s | %8s | %8s | %8s |\n", "round trip over pipes (ms)", "n", "p50",
              "p95", "mean", "max");
  std::printf("|%s|%s|%s|%s|%s|%s|\n", std::string(42, '-').c_str(), std::string(7, '-').c_str(),
              std::string(10, '-').c_str(), std::string(10, '-').c_str(),
              std::string(10, '-').c_str(), std::string(10, '-').c_str());
  print("textDocument/inlayHint (whole file)", summarize(inlay), inlay.size());
  print("textDocument/inlayHint (60-line view)", summarize(viewport), viewport.size());
  print("textDocument/hover", summarize(hover), hover.size());
  print("didChange → diagnostics (reparse)", summarize(edit), edit.size());
  // The server's own account of the same rebuilds: libclang reparse and analysis times.
  std::vector<double> reparse, analysis;
  {
    std::ifstream log(dir + "/server.log");
    std::string l;
    while (std::getline(log, l)) {
      size_t b = l.find("built ");
      size_t pp = l.find("(parse ");
      size_t ap = l.find(", analysis ");
      if (b == std::string::npos || pp == std::string::npos || l.find(" v1 ") != std::string::npos)
        continue;
      reparse.push_back(std::atof(l.c_str() + pp + 7));
      if (ap != std::string::npos) analysis.push_back(std::atof(l.c_str() + ap + 11));
    }
  }
  if (!reparse.empty()) {
    print("  of which libclang reparse (server)", summarize(reparse), reparse.size());
    print("  of which analysis (server)", summarize(analysis), analysis.size());
  }
  std::filesystem::remove_all(dir);
  return 0;
}
