// Test support: the one collection-budget controller on, ticked by the test alone (the engine's
// background thread ticks it about once a second: between a test's calls that would be a window
// of its own), with injected clocks and calibration; left off, with the system's clocks and
// calibration and its background ticks, however the test ends (a failed ASSERT returns early).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "budget_controller.h"
#include "probe_self_timing.h"

namespace perfhat::budget {

class HandTicked {
 public:
  HandTicked(const Settings& s, Calibrator calibrator, const Meter& meter) {
    c_.set_background_ticks(false);
    c_.set_calibrator(calibrator);
    c_.set_meter(meter);
    const detail::Status on = c_.configure(s);
    configured_ = static_cast<bool>(on);
    error_ = on.error;
  }
  ~HandTicked() {
    c_.set_meter(Meter::system());
    c_.set_calibrator(nullptr);
    const detail::Status off = c_.configure(Settings{});
    EXPECT_TRUE(off) << off.error;
    EXPECT_FALSE(detail::g_self_timing.load());  // no budget: the probes time nothing
    c_.set_background_ticks(true);
  }
  HandTicked(const HandTicked&) = delete;
  HandTicked& operator=(const HandTicked&) = delete;
  bool configured() const { return configured_; }
  const std::string& error() const { return error_; }

 private:
  Controller& c_ = Controller::get();
  bool configured_ = false;
  std::string error_;
};

}  // namespace perfhat::budget
