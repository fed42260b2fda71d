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
  // What a re-arm window may spend on records, as a share of the plan's allowance per window it
  // stands for, and at most one window's whole allowance (so a re-arm after 80 windows does not
  // spend 8 windows' worth at once).
  static constexpr double kRecordShare = 0.1;
  static constexpr double kMaxRecordWeight = 1e8;
};

// The probability a re-arm window records a call of one of the `sites` sites it arms with: the
// records it may spend (RearmTunables::kRecordShare of `allowed_cpu_per_s` per window each site
// stood disarmed, `span_windows`, at most one whole window's, at `record_s` a record) shared
// equally among the sites, over the calls the site made a second in the last window it was
// armed in. A site not measured yet (no calls then) is recorded in full. Records taken so stand
// for span_windows / probability calls each: the re-arm window's and those of the windows the
// site was disarmed in, which nobody saw (unbiased while its call rate and durations hold).
double rearmRecordProbability(double allowed_cpu_per_s, double record_s, std::size_t sites,
                              double span_windows, double site_calls_per_s);

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
