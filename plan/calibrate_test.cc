// perfhat-plan calibrate: the bisection on a known overhead curve, the process runner, and the
// command end to end on a real program linked with libperfhat (plan/calibrate_app.cc).
#include "plan/calibrate.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace perfhat::plan {
namespace {

TEST(PlanCalibrate, BisectionFindsTheLargestBoundWithinTheTarget) {
  // 1 % per probed unit: 10 units fit under 10.5 %, 11 do not.
  Calibration c = bisectBound(40, 0.105, [](std::size_t h) { return 0.01 * h; });
  EXPECT_EQ(c.h_bound, 10u);
  EXPECT_EQ(c.steps.front().h, 40u);   // all units first
  EXPECT_LE(c.steps.size(), 1u + 6u);  // then ⌈log2 40⌉ halvings
  // Everything fits: one measurement.
  Calibration all = bisectBound(40, 1.0, [](std::size_t h) { return 0.01 * h; });
  EXPECT_EQ(all.h_bound, 40u);
  EXPECT_EQ(all.steps.size(), 1u);
  // Not even one unit fits.
  EXPECT_EQ(bisectBound(40, 0.001, [](std::size_t h) { return 0.01 * h; }).h_bound, 0u);
}

TEST(PlanCalibrate, RunnerMeasuresCpuAndRefusesFailures) {
  EXPECT_GT(cpuSecondsOf({PERFHAT_CALIBRATE_APP, "300000"}, {}, 60), 0);
  EXPECT_THROW(cpuSecondsOf({"false"}, {}, 60), std::runtime_error);
  EXPECT_THROW(cpuSecondsOf({"/nonexistent/bench"}, {}, 60), std::runtime_error);
  try {
    cpuSecondsOf({"sleep", "5"}, {}, 0.2);
    FAIL() << "no timeout";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("--timeout"), std::string::npos);
  }
}

std::string run(const std::string& cmd, int& status) {
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
  std::string out;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p.get())) > 0) out.append(buf.data(), n);
  status = pclose(p.release());
  return out;
}

TEST(PlanCalibrate, CommandOnARealProgram) {
  const std::string units =
      ::testing::TempDir() + "calibrate_units_" + std::to_string(::getpid()) + ".txt";
  {
    std::ofstream u(units);
    for (int i = 0; i < 40; ++i) u << "calibrate_app::f" << i << "(unsigned long)\n";
  }
  int status = 0;
  // A target no probe set reaches: every unit fits, measured once.
  std::string out = run(std::string(PERFHAT_PLAN_BIN) + " calibrate --units " + units +
                            " --target-overhead 99 --repetitions 1 --seed 1 -- " +
                            PERFHAT_CALIBRATE_APP + " 200000",
                        status);
  ASSERT_EQ(status, 0) << out;
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["h_bound"], 40);
  EXPECT_EQ(j["units"], 40);
  EXPECT_GT(j["baseline_cpu_s"].get<double>(), 0);
  ASSERT_EQ(j["steps"].size(), 1u);
  EXPECT_GT(j["steps"][0]["overhead"].get<double>(), -1);

  // Bad input: exit 2 with the reason.
  run(std::string(PERFHAT_PLAN_BIN) + " calibrate --units " + units +
          " --target-overhead 0 -- true 2>/dev/null",
      status);
  EXPECT_EQ(WEXITSTATUS(status), 2);
  run(std::string(PERFHAT_PLAN_BIN) + " calibrate --units " + units +
          " --target-overhead 0.1 --repetitions 1 -- false 2>/dev/null",
      status);
  EXPECT_EQ(WEXITSTATUS(status), 2);
  std::remove(units.c_str());
}

}  // namespace
}  // namespace perfhat::plan
