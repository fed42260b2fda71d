// End to end: the real perfhat-lsp binary over pipes, real libclang, a real feedback file.
// Paper T4 shape: a lazily loaded getter with production data added inside two nested loops.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/features/features.h"
#include "tests/integration/lsp_client.h"

namespace perfhat::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr const char* kSource = R"src(namespace agile {
struct Task { int hours = 1; };
class Story {
 public:
  // Lazily loaded from storage on first access.
  const Task* loadTasks() const;
  int estimate() const;
};
class Backlog {
 public:
  int total(const Story& s) const;
};
int Backlog::total(const Story& s) const {
  int sum = s.estimate();
  for (int i = 0; i < 10; ++i) {
    for (int j = 0; j < 20; ++j) {
      sum += j;
    }
  }
  return sum;
}
}  // namespace agile
)src";

// Production data (nanoseconds): total() 1 ms, estimate() 2 µs when called from total(),
// loadTasks() 2 ms — recorded only under another caller, so calling it from total() is new code
// whose cost is predicted.
constexpr const char* kFeedback = R"js({"items":[
  {"key":"agile::Backlog::total(const agile::Story &) const",
   "stats":{"count":1200,"errors":0,"mean_ns":1.0e6,"min_ns":5e5,"max_ns":4e6,"p50_ns":1.0e6,
            "p90_ns":1.5e6,"p95_ns":1.8e6,"p99_ns":2.5e6}},
  {"key":"agile::Story::estimate() const",
   "stats":{"count":1200,"mean_ns":2000,"min_ns":1000,"max_ns":9000,"p50_ns":2000,
            "p90_ns":3000,"p95_ns":3500,"p99_ns":5000},
   "callsites":[{"caller":"agile::Backlog::total(const agile::Story &) const","count":1200,
                 "mean_ns":2000,"p50_ns":2000,"p90_ns":3000,"p99_ns":5000,"caller_rate_per_s":20}]},
  {"key":"agile::Story::loadTasks() const",
   "stats":{"count":500,"mean_ns":2.0e6,"min_ns":1e6,"max_ns":9e6,"p50_ns":2.0e6,
            "p90_ns":3e6,"p95_ns":3.5e6,"p99_ns":5e6},
   "callsites":[{"caller":"agile::Story::summary() const","count":500,"mean_ns":2.0e6,
                 "p50_ns":2.0e6,"p90_ns":3e6,"p99_ns":5e6,"caller_rate_per_s":8}]}]})js";

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/perfhat-lsp-e2e-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name, const std::string& content) const {
    std::string p = path_ + "/" + name;
    std::ofstream(p) << content;
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string uriOf(const std::string& path) { return "file://" + path; }

json pos(int line, int character) { return {{"line", line}, {"character", character}}; }

// 0-based line of the first line containing `needle`.
int lineOf(const std::string& text, const std::string& needle) {
  size_t at = text.find(needle);
  return static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
}
int columnOf(const std::string& text, const std::string& needle) {
  size_t at = text.find(needle);
  size_t nl = text.rfind('\n', at);
  return static_cast<int>(at - (nl == std::string::npos ? 0 : nl + 1));
}

class LspE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    src_ = dir_.file("app.cc", kSource);
    feedback_ = dir_.file("feedback.json", kFeedback);
    dir_.file(
        "compile_commands.json",
        json::array(
            {{{"directory", dir_.path()}, {"file", src_}, {"command", "c++ -std=c++20 -c app.cc"}}})
            .dump());
    log_ = dir_.path() + "/server.log";
  }
  std::unique_ptr<LspProcess> start(const std::vector<std::string>& args) {
    auto p = std::make_unique<LspProcess>(PERFHAT_LSP_BIN, args, log_);
    auto init =
        p->call("initialize",
                {{"processId", getpid()},
                 {"rootUri", uriOf(dir_.path())},
                 {"capabilities",
                  {{"textDocument",
                    {{"inlayHint", json::object()}, {"hover", {{"contentFormat", {"markdown"}}}}}},
                   {"workspace", {{"inlayHint", {{"refreshSupport", true}}}}}}}});
    EXPECT_TRUE(init && init->contains("result")) << (init ? init->dump() : "no reply");
    p->notify("initialized", json::object());
    return p;
  }
  void open(LspProcess& p, const std::string& path, const std::string& text, int version = 1) {
    p.notify(
        "textDocument/didOpen",
        {{"textDocument",
          {{"uri", uriOf(path)}, {"languageId", "cpp"}, {"version", version}, {"text", text}}}});
  }
  std::optional<json> diagnostics(LspProcess& p, const std::string& path, int version) {
    return p.waitFor([&](const json& m) {
      return m.value("method", "") == "textDocument/publishDiagnostics" &&
             m["params"]["uri"] == uriOf(path) && m["params"].value("version", -1) == version;
    });
  }
  json hints(LspProcess& p, const std::string& path) {
    auto r = p.call("textDocument/inlayHint",
                    {{"textDocument", {{"uri", uriOf(path)}}},
                     {"range", {{"start", pos(0, 0)}, {"end", pos(1000, 0)}}}});
    EXPECT_TRUE(r && r->contains("result")) << (r ? r->dump() : "no reply");
    return r ? (*r)["result"] : json();
  }
  static std::string hintOnLine(const json& hints, int line) {
    std::string out;
    for (const auto& h : hints) {
      if (h["position"]["line"] == line) out += h["label"].get<std::string>() + " | ";
    }
    return out;
  }
  std::string serverLog() const {
    std::ifstream in(log_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  TempDir dir_;
  std::string src_, feedback_, log_;
};

TEST_F(LspE2E, HintsHoverLensAndPredictedRegression) {
  auto p = start({"--feedback-file", feedback_});
  std::string text = kSource;
  open(*p, src_, text);
  ASSERT_TRUE(diagnostics(*p, src_, 1)) << serverLog();

  // Measured call: estimate() p50 2 µs, shown after the call.
  json h = hints(*p, src_);
  int call_line = lineOf(text, "s.estimate()");
  EXPECT_THAT(hintOnLine(h, call_line), HasSubstr(features::formatDuration(2000)))
      << h.dump(1) << serverLog();

  // Hover on the call: its production statistics.
  auto hover = p->call("textDocument/hover",
                       {{"textDocument", {{"uri", uriOf(src_)}}},
                        {"position", pos(call_line, columnOf(text, "s.estimate()") + 4)}});
  ASSERT_TRUE(hover && hover->contains("result") && !(*hover)["result"].is_null())
      << (hover ? hover->dump() : "") << serverLog();
  std::string md = (*hover)["result"]["contents"]["value"];
  EXPECT_THAT(md, HasSubstr(features::formatDuration(2000)));

  // Code lens on total(): its measured p50.
  auto lens = p->call("textDocument/codeLens", {{"textDocument", {{"uri", uriOf(src_)}}}});
  ASSERT_TRUE(lens && (*lens)["result"].is_array());
  std::string titles;
  for (const auto& l : (*lens)["result"]) titles += l["command"]["title"].get<std::string>() + "\n";
  EXPECT_THAT(titles, HasSubstr("prod"));
  EXPECT_THAT(titles, HasSubstr(features::formatDuration(1.0e6)));

  // The T4 edit: call the lazily loaded getter inside the inner loop (incremental change).
  int inner = lineOf(text, "sum += j;");
  std::string insert = "      s.loadTasks();\n";
  p->notify("textDocument/didChange",
            {{"textDocument", {{"uri", uriOf(src_)}, {"version", 2}}},
             {"contentChanges",
              json::array({{{"range", {{"start", pos(inner, 0)}, {"end", pos(inner, 0)}}},
                            {"text", insert}}})}});
  text.insert(text.find("      sum += j;"), insert);
  auto diags = diagnostics(*p, src_, 2);
  ASSERT_TRUE(diags) << serverLog();
  std::string all_diags = (*diags)["params"]["diagnostics"].dump();
  EXPECT_THAT(all_diags, HasSubstr("perfhat.regression")) << all_diags;

  // Predicted cost of the outer loop = 10 × 20 iterations × 2 ms measured for loadTasks().
  h = hints(*p, src_);
  int outer = lineOf(text, "for (int i = 0;");
  EXPECT_THAT(hintOnLine(h, outer), HasSubstr(features::formatDuration(10 * 20 * 2.0e6)))
      << h.dump(1);
  int inner_loop = lineOf(text, "for (int j = 0;");
  EXPECT_THAT(hintOnLine(h, inner_loop), HasSubstr(features::formatDuration(20 * 2.0e6)))
      << h.dump(1);
  EXPECT_THAT(hintOnLine(h, lineOf(text, "s.loadTasks()")), HasSubstr("~"));  // predicted
  EXPECT_THAT(hintOnLine(h, lineOf(text, "s.loadTasks()")),
              HasSubstr(features::formatDuration(2.0e6)));

  EXPECT_EQ(p->shutdownAndWait(), 0);
}

TEST_F(LspE2E, BadInputGetsAnErrorAndTheServerKeepsAnswering) {
  auto p = start({"--feedback-file", feedback_});
  // Malformed JSON: -32700 with a null id.
  p->sendRaw("Content-Length: 10\r\n\r\n{\"jsonrpc\"");
  auto perr = p->waitFor([](const json& m) {
    return m.contains("error") && m["error"]["code"] == -32700 && m["id"].is_null();
  });
  EXPECT_TRUE(perr);
  // Wrong Content-Length (too small): the cut body is a parse error, the rest is skipped.
  std::string body = R"js({"jsonrpc":"2.0","id":77,"method":"shutdown"})js";
  p->sendRaw("Content-Length: 12\r\n\r\n" + body);
  p->sendRaw("Content-Length: abc\r\n\r\n");
  // Unknown method.
  auto unknown = p->call("perfhat/noSuchMethod", json::object());
  ASSERT_TRUE(unknown);
  EXPECT_EQ((*unknown)["error"]["code"], -32601);
  // Unknown notification: ignored, no reply; the next request is still answered.
  p->notify("perfhat/noSuchNotification", json::object());
  // Request for a file that was never opened.
  auto unopened =
      p->call("textDocument/hover",
              {{"textDocument", {{"uri", uriOf(dir_.path() + "/x.cc")}}}, {"position", pos(0, 0)}});
  ASSERT_TRUE(unopened);
  EXPECT_EQ((*unopened)["error"]["code"], -32602);
  // A file that does not parse: a parse diagnostic, and requests are still answered.
  std::string broken_text = "int broken( {\n  for (;;) \n";
  std::string broken = dir_.file("broken.cc", broken_text);
  open(*p, broken, broken_text);
  auto d = diagnostics(*p, broken, 1);
  ASSERT_TRUE(d) << serverLog();
  EXPECT_FALSE((*d)["params"]["diagnostics"].empty()) << d->dump();
  EXPECT_TRUE(p->call("textDocument/codeLens", {{"textDocument", {{"uri", uriOf(broken)}}}}));
  // Missing compile database: fallback flags, one warning, hints still work.
  TempDir other;
  std::string lone = other.file("lone.cc", kSource);
  open(*p, lone, kSource);
  ASSERT_TRUE(diagnostics(*p, lone, 1));
  auto warn = p->waitFor([](const json& m) {
    return m.value("method", "") == "window/showMessage" &&
           m["params"]["message"].get<std::string>().find("compile_commands.json") !=
               std::string::npos;
  });
  EXPECT_TRUE(warn) << serverLog();
  EXPECT_THAT(hintOnLine(hints(*p, lone), lineOf(kSource, "s.estimate()")),
              HasSubstr(features::formatDuration(2000)));
  // The id-77 shutdown inside the cut frame never took effect: the server still answers.
  EXPECT_EQ(p->shutdownAndWait(), 0);
}

TEST_F(LspE2E, MissingOrCorruptFeedbackFileIsReportedAndServingContinues) {
  for (const std::string& file :
       {dir_.path() + "/missing.json", dir_.file("corrupt.json", "{\"items\": [ {\"key\": ")}) {
    auto p = start({"--feedback-file", file});
    open(*p, src_, kSource);
    ASSERT_TRUE(diagnostics(*p, src_, 1)) << serverLog();
    auto msg =
        p->waitFor([](const json& m) { return m.value("method", "") == "window/showMessage"; });
    ASSERT_TRUE(msg) << serverLog();
    EXPECT_THAT((*msg)["params"]["message"].get<std::string>(), HasSubstr("feedback"));
    // No data, but the lens and hints still answer (unknown, never 0).
    auto lens = p->call("textDocument/codeLens", {{"textDocument", {{"uri", uriOf(src_)}}}});
    ASSERT_TRUE(lens && (*lens)["result"].is_array());
    EXPECT_THAT(lens->dump(), HasSubstr("no production data"));
    EXPECT_EQ(p->shutdownAndWait(), 0);
  }
}

TEST_F(LspE2E, CheckModePrintsAnnotatedSourceAndTimings) {
  std::string out = dir_.path() + "/check.out";
  std::string cmd = std::string(PERFHAT_LSP_BIN) + " --check " + src_ + " --feedback-file " +
                    feedback_ + " --no-color > " + out + " 2>>" + log_;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << serverLog();
  std::ifstream in(out);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_THAT(text, HasSubstr("int Backlog::total"));
  EXPECT_THAT(text, HasSubstr(features::formatDuration(2000)));
  EXPECT_THAT(text, HasSubstr("parse"));
  EXPECT_THAT(text, HasSubstr("fetch"));
  EXPECT_THAT(text, HasSubstr("analysis"));
}

// A script gating on --check must be able to tell "no regression" from "no data": the source
// is still printed, and the exit status says the feedback source failed.
TEST_F(LspE2E, CheckModeExitsWithTwoWhenTheFeedbackSourceFails) {
  const std::string out = dir_.path() + "/check-failed.out";
  for (const std::string& source : {"--feedback-file " + dir_.path() + "/missing.json",
                                    std::string("--handler http://127.0.0.1:1")}) {
    std::string cmd = std::string(PERFHAT_LSP_BIN) + " --check ";
    cmd += src_ + " " + source;
    cmd += " --no-color > " + out + " 2>>" + log_;
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << source;
    EXPECT_EQ(WEXITSTATUS(status), 2) << source << "\n" << serverLog();
    std::ifstream in(out);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_THAT(text, HasSubstr("int Backlog::total")) << source;
  }
  EXPECT_THAT(serverLog(), HasSubstr("the feedback source failed"));
}

// A process id that is certainly not running: a child that has already been reaped.
pid_t endedProcess() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return child;
}

// The directories named `perfhat-lsp-<pid>-…` in `dir`.
std::vector<fs::path> serverTempDirs(const std::string& dir, pid_t pid) {
  const std::string prefix = "perfhat-lsp-" + std::to_string(pid) + "-";
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind(prefix, 0) == 0) found.push_back(e.path());
  }
  return found;
}

// libclang writes a precompiled preamble (megabytes per open file) to the temporary directory and
// deletes it only when the translation unit is disposed. The server keeps it in a directory of its
// own, which goes on a normal exit and on SIGTERM, and which the next server removes after a kill.
TEST_F(LspE2E, TemporaryFilesGoWithTheServerOnSigtermAndAfterAKill) {
  const std::string tmp = dir_.path() + "/tmp";
  fs::create_directory(tmp);
  const std::string stale = tmp + "/perfhat-lsp-" + std::to_string(endedProcess()) + "-Ab12Cd";
  const std::string live = tmp + "/perfhat-lsp-" + std::to_string(getpid()) + "-Ab12Cd";
  fs::create_directory(stale);
  std::ofstream(stale + "/preamble-x.pch") << "left by a killed server";
  fs::create_directory(live);
  // The lock file decides where there is one: held (a server in another PID namespace, whose pid
  // means nothing here) stays; free (the pid in the name was reused by another process) goes.
  const std::string held = tmp + "/perfhat-lsp-" + std::to_string(endedProcess()) + "-Held12";
  const std::string reused = tmp + "/perfhat-lsp-" + std::to_string(getpid()) + "-Free12";
  fs::create_directory(held);
  fs::create_directory(reused);
  const int held_lock = ::open((held + "/.lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  ASSERT_GE(held_lock, 0);
  ASSERT_EQ(::flock(held_lock, LOCK_EX | LOCK_NB), 0);
  std::ofstream(reused + "/.lock") << "";
  // One a server was still making (named before its lock is taken) when it was killed.
  const std::string unfinished =
      tmp + "/perfhat-lsp-new-" + std::to_string(endedProcess()) + "-New123";
  fs::create_directory(unfinished);

  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::string saved = old_tmpdir ? old_tmpdir : "";
  ::setenv("TMPDIR", tmp.c_str(), 1);
  auto p = start({"--feedback-file", feedback_});
  if (old_tmpdir) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  EXPECT_FALSE(fs::exists(stale)) << "the ended server's directory stays";
  EXPECT_TRUE(fs::exists(live)) << "a running process's directory was removed";
  EXPECT_TRUE(fs::exists(held)) << "a directory whose lock is held was removed";
  EXPECT_FALSE(fs::exists(reused)) << "a directory whose lock nobody holds stays";
  EXPECT_FALSE(fs::exists(unfinished)) << "a killed server's unfinished directory stays";
  ::close(held_lock);

  // An include gives the file a preamble; libclang builds it at the first reparse.
  std::string text =
      "#include <vector>\nint f() { std::vector<int> v(3); return int(v.size()); }\n";
  const std::string src = dir_.file("pre.cc", text);
  open(*p, src, text);
  ASSERT_TRUE(diagnostics(*p, src, 1)) << serverLog();
  p->notify("textDocument/didChange",
            {{"textDocument", {{"uri", uriOf(src)}, {"version", 2}}},
             {"contentChanges", json::array({{{"text", text + "int g() { return f(); }\n"}}})}});
  ASSERT_TRUE(diagnostics(*p, src, 2)) << serverLog();
  const std::vector<fs::path> own = serverTempDirs(tmp, p->pid());
  ASSERT_EQ(own.size(), 1u);
  EXPECT_FALSE(fs::is_empty(own[0])) << "libclang wrote nothing to the server's directory";

  ASSERT_EQ(::kill(p->pid(), SIGTERM), 0);
  for (int i = 0; i < 600 && p->running(); ++i) usleep(50'000);  // a bounded wait for the exit
  ASSERT_FALSE(p->running());
  EXPECT_FALSE(fs::exists(own[0])) << "SIGTERM left the server's temporary files";
}

TEST_F(LspE2E, HelpAndVersion) {
  EXPECT_EQ(std::system((std::string(PERFHAT_LSP_BIN) + " --help > /dev/null").c_str()), 0);
  EXPECT_EQ(std::system((std::string(PERFHAT_LSP_BIN) + " --version > /dev/null").c_str()), 0);
  EXPECT_NE(std::system((std::string(PERFHAT_LSP_BIN) + " --bogus 2> /dev/null").c_str()), 0);
}

}  // namespace
}  // namespace perfhat::testing
