// The collection budget's controller around its planner: what it does once, at the first tick,
// and what other threads may see meanwhile. The engine is the real one; the calibration is
// injected (Controller::set_calibrator).
#include "budget_controller.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

namespace perfhat::budget {
namespace {

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
TEST(BudgetController, CalibratesOutsideItsLockAndPublishesTheCostsUnderIt) {
  Controller& c = Controller::get();
  Settings s;
  s.enabled = true;
  std::string error;
  ASSERT_TRUE(c.configure(s, &error)) << error;
  c.set_calibrator(&calibrateAndLookAtTheLock);
  g_calibrations = 0;
  g_lock_free_while_calibrating = false;
  c.tick();
  EXPECT_TRUE(g_lock_free_while_calibrating);
  EXPECT_EQ(g_calibrations, 1);
  EXPECT_DOUBLE_EQ(c.costs().detect_s, 7e-9);
  EXPECT_DOUBLE_EQ(c.costs().cold_s, 90e-9);
  c.tick();  // calibrated once per configuration
  EXPECT_EQ(g_calibrations, 1);
  c.set_calibrator(nullptr);
  ASSERT_TRUE(c.configure(Settings{}, &error)) << error;  // off again for the other tests
}

// A configure() while the calibration runs (outside the lock) drops that calibration's result:
// the next tick calibrates again for the new configuration.
int g_reconfiguring_calibrations = 0;
Costs calibrateWhileReconfigured(double, uint32_t) {
  Costs c;
  c.detect_s = ++g_reconfiguring_calibrations * 1e-9;
  if (g_reconfiguring_calibrations == 1) {
    Settings s;
    s.enabled = true;
    std::string error;
    EXPECT_TRUE(Controller::get().configure(s, &error)) << error;
  }
  return c;
}

TEST(BudgetController, AConfigureDuringTheCalibrationDropsItsResult) {
  Controller& c = Controller::get();
  Settings s;
  s.enabled = true;
  std::string error;
  ASSERT_TRUE(c.configure(s, &error)) << error;
  c.set_calibrator(&calibrateWhileReconfigured);
  g_reconfiguring_calibrations = 0;
  c.tick();  // calibrates, reconfigured meanwhile: result dropped
  EXPECT_EQ(g_reconfiguring_calibrations, 1);
  c.tick();  // calibrates again, for the configuration now in force
  EXPECT_EQ(g_reconfiguring_calibrations, 2);
  EXPECT_DOUBLE_EQ(c.costs().detect_s, 2e-9);
  c.tick();
  EXPECT_EQ(g_reconfiguring_calibrations, 2);  // once per configuration
  c.set_calibrator(nullptr);
  ASSERT_TRUE(c.configure(Settings{}, &error)) << error;  // off again for the other tests
}

}  // namespace
}  // namespace perfhat::budget
