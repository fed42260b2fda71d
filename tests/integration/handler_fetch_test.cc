// perfhat-fetch on a small real project: libclang enumerates its functions, the deployed
// handler's data for them is fetched in bulk and pulled into a local store, which a local
// handler then serves without any further sync.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/integration/handler_process.h"
#include "tests/integration/handler_test_util.h"
#include "tests/integration/run_command.h"

namespace perfhat::testing {
namespace {

std::pair<int, std::string> runFetch(const std::vector<std::string>& args) {
  std::string cmd = PERFHAT_FETCH_BIN;
  for (const auto& a : args) cmd += " '" + a + "'";
  const CommandResult result = runCommand(cmd + " 2>&1");
  return {result.exit_code, result.output};
}

TEST(HandlerFetch, WarmsTheLocalStoreForAWholeProject) {
  TempDir dir("fetch");
  const std::string src = dir / "src";
  std::filesystem::create_directories(src);
  std::ofstream(src + "/cart.cc")
      << "namespace shop {\n"
         "int price(int sku) { return sku * 3; }\n"
         "int total(int n) { int t = 0; for (int i = 0; i < n; ++i) t += price(i); return t; }\n"
         "}\n";
  std::ofstream(src + "/main.cc") << "namespace shop { int total(int n); }\n"
                                     "int main() { return shop::total(3); }\n";
  std::ofstream(src + "/compile_commands.json")
      << "[{\"directory\":\"" << src
      << "\",\"file\":\"cart.cc\",\"command\":\"c++ -std=c++17 -c cart.cc\"},"
      << "{\"directory\":\"" << src
      << "\",\"file\":\"main.cc\",\"command\":\"c++ -std=c++17 -c main.cc\"}]";

  auto [code0, dry] = runFetch({"--compile-commands", src, "--dry-run"});
  ASSERT_EQ(code0, 0) << dry;
  EXPECT_NE(dry.find("functions found: 3"), std::string::npos) << dry;

  HandlerProcess deployed({"--mode", "deployed", "--store", dir / "d.sqlite", "--token", "t"});
  auto c = client(deployed.url(), "t");
  otlp::ExportRequest r = spansFor("shop::total", lognormalLatencies(100, 4), 4);
  for (auto& s : r.spans)
    s.attributes.push_back({"code.function.signature", std::string("int shop::total(int)")});
  ASSERT_EQ(c.Post("/v1/traces", otlp::encodeProtobuf(r), "application/x-protobuf")->status, 200);

  const std::string local_store = dir / "local.sqlite";
  auto [code, out] = runFetch({"--handler", deployed.url(), "--token", "t", "--compile-commands",
                               src, "--store", local_store});
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("functions found: 3"), std::string::npos) << out;
  EXPECT_NE(out.find("with data: 1"), std::string::npos) << out;

  // The local handler serves the fetched data at once (sync interval far away).
  HandlerProcess local(std::vector<std::string>{"--mode", "local", "--store", local_store,
                                                "--upstream", deployed.url() + ",t",
                                                "--sync-interval", "3600"});
  deployed.kill9();  // and even with the upstream gone
  auto cl = client(local.url());
  BatchGetResponse got = batchGet(cl, {"shop::total(int)"});
  ASSERT_EQ(got.items.size(), 1u);
  EXPECT_EQ(got.items[0].stats->count, 100u);

  auto [code2, out2] = runFetch({"--handler", "http://127.0.0.1:1", "--compile-commands", src});
  EXPECT_EQ(code2, 1) << out2;
  EXPECT_NE(out2.find("unreachable"), std::string::npos) << out2;
  auto [code3, out3] = runFetch({"--handler", "http://x", "--compile-commands", dir / "nope"});
  EXPECT_EQ(code3, 1);
  EXPECT_NE(out3.find("compile database"), std::string::npos) << out3;
}

}  // namespace
}  // namespace perfhat::testing
