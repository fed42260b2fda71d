// A real third-party client: the OpenTelemetry JS SDK with its official OTLP/HTTP JSON and
// protobuf exporters (tests/integration/otel_js) sends spans with code.* attributes to a
// deployed perfhat-handler; batchGet must then return the exact counts and percentiles within
// the sketch's 1 % bound. Needs node + npm (installed by scripts/install-deps.sh).
#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/integration/handler_process.h"
#include "tests/integration/handler_test_util.h"

namespace perfhat::testing {
namespace {

std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

TEST(HandlerOtelJs, OpenTelemetryJsExportersFeedTheHandler) {
  // scripts/install-deps.sh installs Node.js unless told not to; only that explicit opt-out
  // skips this test, a missing node otherwise fails it.
  if (std::system("command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1") != 0) {
    const char* opt_out = std::getenv("PERFHAT_SKIP_EDITOR_DEPS");
    if (opt_out != nullptr && std::string(opt_out) == "1") {
      GTEST_SKIP() << "PERFHAT_SKIP_EDITOR_DEPS=1: Node.js was not installed";
    }
    FAIL() << "node/npm not found: run scripts/install-deps.sh";
  }
  const std::string dir = std::string(PERFHAT_SOURCE_DIR) + "/tests/integration/otel_js";
  ASSERT_EQ(std::system((dir + "/setup.sh").c_str()), 0) << "npm ci failed in " << dir;

  TempDir tmp("otel-js");
  HandlerProcess h({"--mode", "deployed", "--store", tmp / "d.sqlite", "--token", "js-token"});
  const int n = 200;
  for (const char* protocol : {"json", "proto"}) {
    std::string cmd = "node " + shellQuote(dir + "/export.js") + " --url " + h.url() +
                      " --token js-token --protocol " + protocol + " --count " + std::to_string(n);
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  auto c = client(h.url(), "js-token");
  BatchGetResponse r = batchGet(c, {"js::Checkout::run(int)", "js::Db::query"});
  ASSERT_EQ(r.items.size(), 2u) << (r.missing.empty() ? "" : r.missing[0]);
  std::vector<double> parent, child;
  for (int i = 0; i < n; ++i) {
    parent.push_back((i + 1) * 1e6);
    child.push_back((i + 1) * 0.5e6);
  }
  for (int rep = 0; rep < 1; ++rep) {  // both protocols sent the same latencies
    parent.insert(parent.end(), parent.begin(), parent.end());
    child.insert(child.end(), child.begin(), child.end());
  }
  for (const FeedbackItem& item : r.items) {
    const bool is_parent = item.key == "js::Checkout::run(int)";
    const auto& exact = is_parent ? parent : child;
    ASSERT_TRUE(item.stats) << item.key;
    EXPECT_EQ(item.stats->count, exact.size()) << item.key;
    for (auto [q, got] : {std::pair{0.5, item.stats->p50_ns}, {0.99, item.stats->p99_ns}}) {
      double e = exactQuantile(exact, q);
      EXPECT_LE(std::abs(got - e), 0.01 * e + 1e3)
          << item.key << " q=" << q;  // +1 µs: JS ms→hrtime rounding
    }
    EXPECT_EQ(item.versions, std::vector<std::string>{"3.1.0"});
    EXPECT_EQ(item.services, (std::vector<std::string>{"js-shop-json", "js-shop-proto"}));
    if (is_parent) {
      EXPECT_EQ(item.file, "/src/checkout.cc");
      EXPECT_EQ(item.line, 12);
    } else {
      ASSERT_EQ(item.callsites.size(), 1u);
      EXPECT_EQ(item.callsites[0].caller, "js::Checkout::run(int)");
      EXPECT_EQ(item.callsites[0].count, exact.size());
      EXPECT_DOUBLE_EQ(item.callsites[0].calls_per_parent, 1.0);
      ASSERT_TRUE(item.callsites[0].caller_input_size);
      EXPECT_DOUBLE_EQ(*item.callsites[0].caller_input_size, 4.0);
    }
  }
}

}  // namespace
}  // namespace perfhat::testing
