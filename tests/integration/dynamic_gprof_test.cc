// Counts from our traces equal gprof's (issue #24, seed 001 BM-001-MET): one run of a
// deterministic program built with -pg and -finstrument-functions writes gmon.out and sends
// libperfhat's data to a real perfhat-handler; every caller → callee count among the program's
// functions that `gprof -b -q` reports must equal the handler's GET /v1/dynamic count, edge by
// edge, and every function's call total its visit count. Once with spans, once with the
// aggregate export.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "tests/integration/handler_process.h"
#include "tests/integration/run_command.h"

namespace {

using perfhat::testing::HandlerProcess;
using perfhat::testing::TempDir;
using Edges = std::map<std::pair<std::string, std::string>, double>;  // (caller, callee) → calls

// Runs the app in `dir` (gmon.out lands there) with `env` added; returns its exit status.
int runIn(const std::string& dir, const std::vector<std::string>& env) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(126);
    for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    execl(PERFHAT_GPROF_APP, PERFHAT_GPROF_APP, static_cast<char*>(nullptr));
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// gprof's call graph (-q, brief): in each entry, the lines above the primary line [N] are its
// callers ("self children calls/total name [i]"); the primary line has the function's total.
struct Gprof {
  Edges edges;
  std::map<std::string, double> calls;
};
Gprof parseGprof(const std::string& text) {
  Gprof g;
  static const std::regex parent(R"(^\s+[\d.]+\s+[\d.]+\s+(\d+)/\d+\s+(.+?) \[\d+\]$)");
  static const std::regex primary(
      R"(^\[\d+\]\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+(\d+)\s+(.+?) \[\d+\]$)");
  std::vector<std::pair<std::string, double>> callers;
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (line.rfind("-----", 0) == 0) {
      callers.clear();
    } else if (std::regex_match(line, m, primary)) {
      const std::string fn = m[2];
      g.calls[fn] = std::stod(m[1]);
      for (const auto& [caller, n] : callers) g.edges[{caller, fn}] = n;
      callers.clear();
      // Lines after the primary one are its callees until the next separator: skip them.
      while (std::getline(in, line) && line.rfind("-----", 0) != 0) {
      }
    } else if (std::regex_match(line, m, parent)) {
      callers.emplace_back(m[2], std::stod(m[1]));
    }
  }
  return g;
}

nlohmann::json dynamic(const std::string& url, const std::string& service, const std::string& key) {
  httplib::Client c(url);
  auto res = c.Get("/v1/dynamic?limit=1000&service=" + service +
                   "&key=" + httplib::detail::encode_query_param(key));
  if (!res || res->status != 200) return {};
  return nlohmann::json::parse(res->body);
}

class DynamicGprof : public ::testing::TestWithParam<const char*> {};

TEST_P(DynamicGprof, HandlerCountsEqualGprofEdgeByEdge) {
  const std::string mode = GetParam();
  TempDir dir("gprof");
  HandlerProcess handler(
      {"--mode", "deployed", "--store", dir / "s.sqlite", "--allow-unauthenticated"});
  const std::string service = "gprof-" + mode;
  ASSERT_EQ(runIn(dir.path().string(), {"PERFHAT_ENDPOINT=" + handler.url(), "PERFHAT_SAMPLER=full",
                                        "PERFHAT_EXPORT=" + mode, "PERFHAT_SCOPE=gp::*",
                                        "OTEL_SERVICE_NAME=" + service}),
            0);
  const auto out = perfhat::testing::runCommand("cd '" + dir.path().string() + "' && gprof -b -q " +
                                                PERFHAT_GPROF_APP + " gmon.out 2>&1");
  ASSERT_EQ(out.exit_code, 0) << out.output;
  const Gprof g = parseGprof(out.output);
  size_t compared = 0;
  double calls = 0;
  for (const auto& [fn, n] : g.calls) {
    if (fn.rfind("gp::", 0) != 0) continue;
    const nlohmann::json d = dynamic(handler.url(), service, fn);
    ASSERT_TRUE(d.is_object()) << "handler has no " << fn;
    EXPECT_EQ(d["visits"].get<double>(), n) << fn;
    calls += n;
    std::map<std::string, double> ours;
    for (const auto& c : d["callers"]) ours[c["key"]] = c["count"].get<double>();
    for (const auto& [edge, count] : g.edges) {
      if (edge.second != fn || edge.first.rfind("gp::", 0) != 0) continue;
      EXPECT_EQ(ours[edge.first], count) << edge.first << " -> " << fn;
      ours.erase(edge.first);
      ++compared;
    }
    EXPECT_TRUE(ours.empty()) << fn << " has callers gprof does not list: " << ours.begin()->first;
  }
  EXPECT_EQ(compared, 5u) << out.output;  // top→mid, top→other, other→mid, other→leaf, mid→leaf
  EXPECT_GT(calls, 3000) << out.output;
}

INSTANTIATE_TEST_SUITE_P(Modes, DynamicGprof, ::testing::Values("spans", "aggregates"));

}  // namespace
