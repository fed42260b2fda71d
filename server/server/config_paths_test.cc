// Relative paths in settings name the same file for the whole session: libclang sets the
// process's working directory to a compile entry's "directory" while it parses, so the server
// makes them absolute when it reads each layer (the workspace root for editor settings and
// .perfhat.json, the start directory for the command line and the environment).
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "server/server/clang_analyzer.h"
#include "server/server/config.h"
#include "server/server/server.h"
#include "server/server/sink_test_util.h"

namespace perfhat::server {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

TEST(ConfigPaths, RelativePathsAreMadeAbsoluteAgainstTheLayersBase) {
  json layer = {{"compileCommands", "build"},
                {"feedbackFile", "data/../feedback.json"},
                {"handler", "http://127.0.0.1:1"},
                {"analysis", {{"compile_commands", "out/compile_commands.json"}}}};
  json out = withAbsolutePaths(layer, "/srv/ws");
  EXPECT_EQ(out["compileCommands"], "/srv/ws/build");
  EXPECT_EQ(out["feedbackFile"], "/srv/ws/feedback.json");
  EXPECT_EQ(out["analysis"]["compile_commands"], "/srv/ws/out/compile_commands.json");
  EXPECT_EQ(out["handler"], "http://127.0.0.1:1");  // not a path

  json kept = {{"compileCommands", "/abs/build"}, {"feedbackFile", ""}, {"analysis", 3}};
  EXPECT_EQ(withAbsolutePaths(kept, "/srv/ws"), kept);  // absolute, empty, wrong type: as given
  EXPECT_EQ(withAbsolutePaths(layer, ""), layer);       // no base (no workspace root)
}

// The diagnostics published for `version` of the document: the last of them once one came (a
// version may be published again, e.g. when its feedback arrives).
std::optional<json> diagnostics(testing::Sink& sent, int version) {
  auto ofVersion = [&](const json& m) {
    return m.value("method", "") == "textDocument/publishDiagnostics" &&
           m["params"].value("version", -1) == version;
  };
  if (!sent.waitFor(ofVersion)) return std::nullopt;
  std::optional<json> last;
  for (const json& m : sent.all())
    if (ofVersion(m)) last = m["params"]["diagnostics"];
  return last;
}

// The texts of the messages shown to the user, a line each.
std::string shownMessages(testing::Sink& sent) {
  std::string out;
  for (const json& m : sent.all())
    if (m.value("method", "") == "window/showMessage")
      out += m["params"].value("message", "") + "\n";
  return out;
}

class RelativeCompileCommands : public ::testing::Test {
 protected:
  void SetUp() override {
    cwd_ = fs::current_path();
    char tmpl[] = "/tmp/perfhat-relative-db-XXXXXX";
    dir_ = mkdtemp(tmpl);
    fs::create_directories(dir_ + "/inc");
    fs::create_directories(dir_ + "/build");
    // Compiles only with the database's -I: fallback flags give "'needed.h' file not found".
    std::ofstream(dir_ + "/inc/needed.h") << "inline int twice(int x) { return 2 * x; }\n";
    std::ofstream(dir_ + "/a.cc") << text_;
    json db = json::array(
        {{{"directory", dir_ + "/build"},
          {"file", dir_ + "/a.cc"},
          {"arguments", {"c++", "-std=c++20", "-I" + dir_ + "/inc", "-c", dir_ + "/a.cc"}}}});
    std::ofstream(dir_ + "/build/compile_commands.json") << db.dump();
  }
  void TearDown() override {
    server_.reset();
    std::error_code ec;
    fs::current_path(cwd_, ec);  // libclang moved it into the database's directory
    fs::remove_all(dir_, ec);
  }
  void notify(const std::string& method, json params) {
    server_->handleBody(json{{"jsonrpc", "2.0"}, {"method", method}, {"params", params}}.dump());
  }

  const std::string text_ = "#include \"needed.h\"\nint f(int n) { return twice(n); }\n";
  fs::path cwd_;
  std::string dir_;
  Logger log_;
  testing::Sink sent_{std::chrono::seconds(60)};  // a real libclang parses
  std::unique_ptr<Server> server_;
};

// "build" in the editor settings is the workspace root's build/, for the first build and for
// every edit after it (the process's working directory is the test's, then build/).
TEST_F(RelativeCompileCommands, EditorSettingIsRelativeToTheWorkspaceRootForEveryBuild) {
  log_.setLevel(LogLevel::Error);
  server_ = std::make_unique<Server>(
      ConfigLayers{}, std::make_unique<ClangAnalyzer>(), [this](const json& j) { sent_.push(j); },
      log_);
  server_->handleBody(json{{"jsonrpc", "2.0"},
                           {"id", 1},
                           {"method", "initialize"},
                           {"params",
                            {{"rootUri", "file://" + dir_},
                             {"capabilities", json::object()},
                             {"initializationOptions",
                              {{"compileCommands", "build"},
                               {"debounce", {{"minMs", 0}, {"maxMs", 0}}},
                               {"analysis", {{"index", {{"enabled", false}}}}}}}}}}
                          .dump());
  notify("initialized", json::object());
  const std::string uri = "file://" + dir_ + "/a.cc";
  notify(
      "textDocument/didOpen",
      {{"textDocument", {{"uri", uri}, {"languageId", "cpp"}, {"version", 1}, {"text", text_}}}});
  for (int version = 1; version <= 3; ++version) {
    if (version > 1)
      notify("textDocument/didChange",
             {{"textDocument", {{"uri", uri}, {"version", version}}},
              {"contentChanges",
               json::array({{{"text", text_ + "// v" + std::to_string(version) + "\n"}}})}});
    auto diags = diagnostics(sent_, version);
    ASSERT_TRUE(diags) << "no diagnostics for v" << version;
    EXPECT_EQ(diags->dump().find("file not found"), std::string::npos)
        << "v" << version << ": " << diags->dump();
  }
  EXPECT_EQ(shownMessages(sent_).find("fallback flags"), std::string::npos) << shownMessages(sent_);
}

}  // namespace
}  // namespace perfhat::server
