// Probing mode's re-arm schedule: classes the plan does not trace are disarmed (their calls cost
// what a disabled probe costs), so their call rates are measured again only in re-arm windows,
// when their sites count every call for one planning window. A re-arm window costs the detection
// of every untraced call in it; when the rates it measures are those the last one measured, the
// next comes twice as late (up to kMaxEvery windows), and when they moved, kFirstEvery windows
// later again. Pure logic, driven by the controller once a window; tests drive it directly.
#pragma once

#include <cstddef>
#include <map>
#include <string>

namespace perfhat::budget {

struct RearmTunables {
  static constexpr std::size_t kFirstEvery = 10;  // windows between re-arms after a change
  static constexpr std::size_t kMaxEvery = 80;    // ... at most, while the rates hold still
  // A class's rate is unchanged when within this share of the last measurement (or both below
  // kQuietHz calls per second).
  static constexpr double kStableChange = 0.25;
  static constexpr double kQuietHz = 1;
};

class RearmSchedule {
 public:
  // Whether window `window` (counted from 1) re-arms the untraced sites; when it does, the next
  // re-arm is scheduled `every()` windows later.
  bool arm(std::size_t window);
  // The call rates (per class, calls per second) that the last re-arm window measured.
  void measured(const std::map<std::string, double>& rates);
  // The windows between two re-arms, as things stand.
  std::size_t every() const { return every_; }

 private:
  std::size_t every_ = RearmTunables::kFirstEvery;
  std::size_t next_ = RearmTunables::kFirstEvery;
  std::size_t armed_at_ = 0;
  std::map<std::string, double> last_;
  bool measured_once_ = false;
};

}  // namespace perfhat::budget
