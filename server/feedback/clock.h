// Injectable time source, so TTL expiry is tested without sleeping.
#pragma once

#include <chrono>

namespace perfhat::feedback {

class Clock {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  virtual ~Clock() = default;
  virtual time_point now() const = 0;
};

class SteadyClock : public Clock {
 public:
  time_point now() const override { return std::chrono::steady_clock::now(); }
  static SteadyClock& instance() {
    static SteadyClock c;
    return c;
  }
};

// For tests: time moves only when advance() is called.
class ManualClock : public Clock {
 public:
  time_point now() const override { return now_; }
  void advance(std::chrono::steady_clock::duration d) { now_ += d; }

 private:
  time_point now_{};
};

}  // namespace perfhat::feedback
