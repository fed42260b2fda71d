// lsp-proxy between an editor-like client and the REAL perfhat-lsp: the participant's first
// encounter and root cause of T4 come from what the server showed (its regression warning on
// the patched iterationMetrics(), the hover on the effortSpent() call).
#include "experiment/lsp_proxy.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "experiment/session.h"
#include "tests/integration/lsp_client.h"

namespace perfhat::experiment {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

TEST(ExperimentLspProxy, ObserverLogsRegressionsOnceAndAnsweredHovers) {
  ProxyObserver o;
  const json diag = {{"method", "textDocument/publishDiagnostics"},
                     {"params",
                      {{"uri", "file:///a.cc"},
                       {"diagnostics",
                        {{{"code", "perfhat.regression"}, {"message", "Predicted +20 ms of f()"}},
                         {{"code", "other"}, {"message", "not ours"}}}}}}};
  auto events = o.serverMessage(diag);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["type"], "lsp_diagnostic");
  EXPECT_TRUE(o.serverMessage(diag).empty());  // re-published unchanged: already logged
  o.clientMessage({{"id", 7}, {"method", "textDocument/hover"}});
  EXPECT_TRUE(o.serverMessage({{"id", 8}, {"result", {{"contents", "x"}}}}).empty());
  events = o.serverMessage({{"id", 7}, {"result", {{"contents", {{"value", "g() 3 ms"}}}}}});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["text"], "g() 3 ms");
  EXPECT_TRUE(o.serverMessage({{"id", 7}, {"result", nullptr}}).empty());  // answered once
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(ExperimentLspProxy, FirstEncounterAndRootCauseFromTheRealLanguageServer) {
  const fs::path tmp = fs::temp_directory_path() / ("perfhat-proxy-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  const fs::path work = tmp / "work", session = tmp / "session";
  fs::create_directories(work / "samples");
  fs::copy(PERFHAT_SOURCE_DIR "/samples/agile", work / "samples" / "agile",
           fs::copy_options::recursive);
  const std::string patch = "patch -s -p1 -d " + work.string() +
                            " < " PERFHAT_SOURCE_DIR "/samples/tasks/T4/reference.patch";
  ASSERT_EQ(std::system(patch.c_str()), 0);
  const fs::path file = work / "samples" / "agile" / "iteration_service.cc";
  std::ofstream(work / "compile_commands.json")
      << json::array({{{"directory", work.string()},
                       {"file", file.string()},
                       {"command", "c++ -std=c++20 -I" + work.string() +
                                       " -I" PERFHAT_SOURCE_DIR "/instrumentation/include -I" +
                                       PERFHAT_SOURCE_DIR " -c " + file.string()}}})
             .dump();
  const Study study = loadStudy(PERFHAT_SOURCE_DIR "/samples/study/study.json");
  const std::string log = (session / "events.jsonl").string();
  fs::create_directories(session);
  appendEvent(
      log,
      {nowMs(), "session_started", "", "runner", {{"participant", "P02"}, {"group", "treatment"}}});
  appendEvent(log, {nowMs(), "task_started", "T4", "keyboard", json::object()});

  {
    perfhat::testing::LspProcess p(
        PERFHAT_EXPERIMENT_BIN,
        {"lsp-proxy", "--session", session.string(), "--", PERFHAT_LSP_BIN, "--feedback-file",
         PERFHAT_SOURCE_DIR "/samples/datasets/agile.feedback.json", "--compile-commands",
         work.string()},
        (tmp / "server.log").string());
    auto init = p.call("initialize", {{"processId", getpid()},
                                      {"rootUri", "file://" + work.string()},
                                      {"capabilities", json::object()}});
    ASSERT_TRUE(init && init->contains("result")) << slurp(tmp / "server.log");
    p.notify("initialized", json::object());
    const std::string text = slurp(file);
    const std::string uri = "file://" + file.string();
    p.notify(
        "textDocument/didOpen",
        {{"textDocument", {{"uri", uri}, {"languageId", "cpp"}, {"version", 1}, {"text", text}}}});
    auto warned = p.waitFor([&](const json& m) {
      if (m.value("method", "") != "textDocument/publishDiagnostics") return false;
      for (const auto& d : m["params"]["diagnostics"]) {
        if (d.value("code", "") == "perfhat.regression") return true;
      }
      return false;
    });
    ASSERT_TRUE(warned) << slurp(tmp / "server.log");
    const size_t at = text.find("task.effortSpent()");
    ASSERT_NE(at, std::string::npos);
    const int line = static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
    const int col = static_cast<int>(at - text.rfind('\n', at) - 1 + 7);  // inside effortSpent
    auto hover = p.call("textDocument/hover", {{"textDocument", {{"uri", uri}}},
                                               {"position", {{"line", line}, {"character", col}}}});
    ASSERT_TRUE(hover && !(*hover)["result"].is_null()) << (hover ? hover->dump() : "none");
    p.shutdownAndWait();
  }
  appendEvent(log, {nowMs(), "task_finished", "T4", "keyboard", json::object()});
  const SessionState s = replay(study, loadEvents(log));
  const TaskProgress& t = s.tasks.at("T4");
  EXPECT_TRUE(t.fe_ms) << slurp(log);
  EXPECT_EQ(t.fe_source, "lsp");
  EXPECT_TRUE(t.rca_ms) << slurp(log);
  EXPECT_EQ(t.rca_source, "lsp");
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace perfhat::experiment
