// The collection budget's controller around its planner: what it does once, at the first tick,
// and what other threads may see meanwhile. The engine is the real one; the calibration is
// injected (Controller::set_calibrator).
#include "budget_controller.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

#include <time.h>

namespace perfhat::budget {
namespace {

// Turns the collection budget on with the default settings.
detail::Status enable() {
  Settings s;
  s.enabled = true;
  return Controller::get().configure(s);
}

// Each test runs the one controller on, and leaves it off with the system's clocks and
// calibration for the other tests.
class BudgetController : public ::testing::Test {
 protected:
  void SetUp() override {
    const detail::Status on = enable();
    ASSERT_TRUE(on) << on.error;
  }
  void TearDown() override {
    c_.set_meter(Meter::system());
    c_.set_calibrator(nullptr);
    const detail::Status off = c_.configure(Settings{});
    ASSERT_TRUE(off) << off.error;
  }

  Controller& c_ = Controller::get();
};

// What the injected calibration saw: whether another thread found the controller's lock free
// while it ran.
bool g_lock_free_while_calibrating = false;
int g_calibrations = 0;

Costs calibrateAndLookAtTheLock(double, uint32_t) {
  ++g_calibrations;
  std::thread other([] { g_lock_free_while_calibrating = Controller::get().unlocked(); });
  other.join();
  Costs c;
  c.detect_s = 7e-9;
  c.report_s = 400e-9;
  c.cold_s = 90e-9;
  return c;
}

// The calibration sweeps caches for tens of ms: it runs before tick() takes the lock, so a
// thread reading the plan or the status (Controller::plan/status_json) does not wait for it; its
// result is published under the lock, once.
TEST_F(BudgetController, CalibratesOutsideItsLockAndPublishesTheCostsUnderIt) {
  c_.set_calibrator(&calibrateAndLookAtTheLock);
  g_calibrations = 0;
  g_lock_free_while_calibrating = false;
  c_.tick();
  EXPECT_TRUE(g_lock_free_while_calibrating);
  EXPECT_EQ(g_calibrations, 1);
  EXPECT_DOUBLE_EQ(c_.costs().detect_s, 7e-9);
  EXPECT_DOUBLE_EQ(c_.costs().cold_s, 90e-9);
  c_.tick();  // calibrated once per configuration
  EXPECT_EQ(g_calibrations, 1);
}

// A configure() while the calibration runs (outside the lock) drops that calibration's result:
// the next tick calibrates again for the new configuration.
int g_reconfiguring_calibrations = 0;
Costs calibrateWhileReconfigured(double, uint32_t) {
  Costs c;
  c.detect_s = ++g_reconfiguring_calibrations * 1e-9;
  if (g_reconfiguring_calibrations == 1) {
    const detail::Status on = enable();
    EXPECT_TRUE(on) << on.error;
  }
  return c;
}

TEST_F(BudgetController, AConfigureDuringTheCalibrationDropsItsResult) {
  c_.set_calibrator(&calibrateWhileReconfigured);
  g_reconfiguring_calibrations = 0;
  c_.tick();  // calibrates, reconfigured meanwhile: result dropped
  EXPECT_EQ(g_reconfiguring_calibrations, 1);
  c_.tick();  // calibrates again, for the configuration now in force
  EXPECT_EQ(g_reconfiguring_calibrations, 2);
  EXPECT_DOUBLE_EQ(c_.costs().detect_s, 2e-9);
  c_.tick();
  EXPECT_EQ(g_reconfiguring_calibrations, 2);  // once per configuration
}

// The collector's cost is its thread's CPU clock from one tick to the next: what the thread does
// between ticks (the export, its serialisation, HTTP, the status post) is charged to the window
// as much as the tick's own work. Wall and process clocks are injected (one second, one CPU
// second per window); the collector's is the real thread clock.
double g_fake_s = 0;
double fakeWall() { return g_fake_s += 1; }
double fakeProcess() { return g_fake_s; }
Costs fixedCosts(double, uint32_t) { return {10e-9, 500e-9}; }

double threadCpu() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

TEST_F(BudgetController, ChargesWhatItsThreadDoesBetweenTicks) {
  c_.set_calibrator(&fixedCosts);
  c_.set_meter({&fakeWall, &fakeProcess, Meter::system().collector_cpu});
  c_.tick();  // calibrates; the first window starts
  // An export's worth of work on the collector's thread, outside tick(): 30 ms of CPU building
  // and dropping strings.
  const double t0 = threadCpu();
  std::size_t built = 0;
  while (threadCpu() - t0 < 0.03) built += std::string(4096, 'x').append("{}").size();
  const double spent = threadCpu() - t0;
  c_.tick();
  const std::string status = c_.status_json(true);
  const std::size_t at = status.find("\"collector\":");
  ASSERT_NE(at, std::string::npos) << status;
  EXPECT_GE(std::stod(status.substr(at + 12)), spent) << status << built;
}

// A collector clock that reads less than at the last tick (a thread clock read on another
// thread, a clock reset) is charged nothing, not a negative cost: the handler refuses a status
// with a negative part.
double g_collector_s = 10;
double fallingCollector() { return g_collector_s -= 0.5; }

TEST_F(BudgetController, AFallingCollectorClockIsChargedNothing) {
  c_.set_calibrator(&fixedCosts);
  c_.set_meter({&fakeWall, &fakeProcess, &fallingCollector});
  c_.tick();  // calibrates; the first window starts
  c_.tick();
  const std::string status = c_.status_json(true);
  const std::size_t at = status.find("\"collector\":");
  ASSERT_NE(at, std::string::npos) << status;
  EXPECT_EQ(std::stod(status.substr(at + 12)), 0) << status;
}

// A refused setting leaves the budget off and says which, in the words the engine prints.
TEST_F(BudgetController, RefusedSettingsSayWhy) {
  Settings s;
  s.enabled = true;
  s.classes = "x";
  EXPECT_EQ(c_.configure(s).error, "PERFHAT_BUDGET_CLASSES: rule 1 ('x'): expected name=selector");
  EXPECT_FALSE(c_.enabled());
  s.classes.clear();
  s.error = "PERFHAT_BUDGET: not a share";
  EXPECT_EQ(c_.configure(s).error, "PERFHAT_BUDGET: not a share");
  EXPECT_FALSE(c_.enabled());
}

}  // namespace
}  // namespace perfhat::budget
