// libperfhat's collection-budget status reaches a real perfhat-handler (issue #22): the library
// runs in probing mode with the OTLP exporter pointed at the handler process, and an editor's
// read (GET /v1/budget?service=) answers the plan's classes and the stack samples' estimates.
#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>
#include <time.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "instrumentation/src/budget_test_workload.h"
#include "perfhat/perfhat.hpp"
#include "tests/integration/handler_process.h"

PERFHAT_BUDGET_TEST_WORKLOAD(budgetpublish)

namespace perfhat::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kToken = "budget-token";

double secondsNow() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + t.tv_nsec * 1e-9;
}

TEST(BudgetPublish, ProbingStatusAndStackSampleEstimatesReachTheHandler) {
  TempDir dir("budget-publish");
  HandlerProcess handler({"--mode", "deployed", "--store", dir / "d.sqlite", "--token", kToken});
  // As in instr_budget_test: the budget the probes' cost allows under a sanitizer too. Recording
  // the hot class (~4 % here) never fits; whether the cold one does depends on what the
  // collector's own thread costs this small process (2-5 %, measured: the governor charges it).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  ::setenv("PERFHAT_BUDGET", "0.3", 1);
#else
  ::setenv("PERFHAT_BUDGET", "0.03", 1);
#endif
  ::setenv("PERFHAT_BUDGET_MODE", "probing", 1);
  ::setenv("PERFHAT_BUDGET_CLASSES",
           "hot=ns:budgetpublish::hot::*;cold=ns:budgetpublish::cold::*@5", 1);
  ::setenv("PERFHAT_BUDGET_WINDOWS", "2", 1);
  perfhat::Config c;
  c.service_name = "budget-shop";
  c.service_version = "3.1";
  c.endpoint = handler.url();
  c.token = kToken;
  c.sampler = "full";
  c.export_interval_s = 0.5;
  ASSERT_TRUE(perfhat::init(c)) << perfhat::last_error();

  httplib::Client client("127.0.0.1",
                         std::stoi(handler.url().substr(handler.url().rfind(':') + 1)));
  client.set_bearer_token_auth(kToken);
  client.set_read_timeout(10s);
  // Until the handler holds a status whose untraced hot class has estimated stack-sample time (the
  // library sends one every few seconds, and at once when its plan changes).
  json got;
  const double until = secondsNow() + 20;
  while (secondsNow() < until) {
    for (int round = 0; round < 50; ++round) {
      for (int i = 0; i < 100; ++i) budgetpublish::hot::tick();
      budgetpublish::cold::step();
    }
    auto r = client.Get("/v1/budget?service=budget-shop");
    ASSERT_TRUE(r);
    if (r->status != 200) continue;
    got = json::parse(r->body);
    bool estimated = false, hot_untraced = false;
    for (const json& k : got["status"]["classes"]) {
      hot_untraced |= k["name"] == "hot" && !k["traced"].get<bool>();
    }
    for (const json& f : got["status"]["sampled_functions"]) {
      estimated |=
          f["function"].get<std::string>().find("budgetpublish::hot::tick") != std::string::npos &&
          f["estimated_cpu_s"].get<double>() > 0;
    }
    if (estimated && hot_untraced) break;
  }
  perfhat::shutdown();
  for (const char* v : {"PERFHAT_BUDGET", "PERFHAT_BUDGET_MODE", "PERFHAT_BUDGET_CLASSES",
                        "PERFHAT_BUDGET_WINDOWS"})
    ::unsetenv(v);
  SCOPED_TRACE(got.dump());
  ASSERT_TRUE(got.is_object());
  EXPECT_EQ(got["service"], "budget-shop");
  EXPECT_EQ(got["version"], "3.1");
  const json& s = got["status"];
  EXPECT_EQ(s["mode"], "probing");
  EXPECT_EQ(s["window_s"], 2);
  EXPECT_TRUE(s.contains("predicted_overhead"));
  EXPECT_TRUE(s.contains("measured_overhead"));
  // The last window's prices and charge, and the fences' cost of the in-situ timing, as the
  // library sends them.
  for (const char* part : {"detect", "report", "counted", "sample", "cold"}) {
    EXPECT_TRUE(s["window_price_ns"].contains(part)) << part;
  }
  for (const char* part : {"detect", "report", "counted", "requests", "passed", "cold", "measuring",
                           "samples", "collector"}) {
    EXPECT_TRUE(s["window_cost_s"].contains(part)) << part;
  }
  EXPECT_TRUE(s["in_situ"].contains("fence_ns"));
  EXPECT_TRUE(s["in_situ"].contains("entry_fence_ns"));
  ASSERT_EQ(s["classes"].size(), 2u);
  for (const json& k : s["classes"]) {
    if (k["name"] == "hot") {
      EXPECT_FALSE(k["traced"].get<bool>());  // covered by samples
    }
    // The cheap class is traced whenever what the collector's own cost leaves of the budget
    // pays for tracing it (detection and report of each of its calls).
    if (k["name"] == "cold") {
      const double price = k["frequency_hz"].get<double>() *
                           (s["detect_ns"].get<double>() + s["report_ns"].get<double>()) * 1e-9;
      EXPECT_TRUE(k["traced"].get<bool>() || s["over_budget"].get<bool>() ||
                  s["allowed_cpu_per_s"].get<double>() < price);
    }
    EXPECT_GT(k["frequency_hz"].get<double>(), 0);
  }
  double hot_cpu = 0;
  for (const json& f : s["sampled_functions"]) {
    if (f["function"].get<std::string>().find("budgetpublish::hot::tick") != std::string::npos)
      hot_cpu = f["estimated_cpu_s"].get<double>();
  }
  EXPECT_GT(hot_cpu, 0);
}

}  // namespace
}  // namespace perfhat::testing
