#include "budget_calibration.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "budget_cold_calibration.h"
#include "budget_runtime.h"
#include "engine.h"
#include "probe_calibration.h"
#include "probe_self_timing.h"

namespace perfhat::budget {
namespace {

using autoinstrument::ProbeKind;

uint64_t ticks() { return detail::now_ticks(); }

// Single cold calls are timed with fenced clock reads (their misses land inside the interval).
uint64_t fenced() { return detail::fenced_ticks(); }

constexpr uint32_t kSiteMargin = 256;

// `plan` extended to site `id` (the sites past its end are kept, as they were).
std::vector<uint64_t> with_site(std::vector<uint64_t> plan, uint32_t id) {
  if (plan.size() < id + 1) plan.resize(id + 1, ~uint64_t{0});
  return plan;
}

// The probe's own site on private slots (an id no real site has yet) and a thread state no
// export ever drains.
class MacroCalibration final : public autoinstrument::CalibrationTarget {
 public:
  explicit MacroCalibration(uint32_t id) : id_(id), slots_(id + 1) {
    ts_.hot.slots = slots_.data();
    ts_.hot.capacity = id + 1;
    ts_.hot.owner = &ts_;
    ts_.hot.rng = 0x9E3779B97F4A7C15ull;
    ts_.hot.eh_uncaught = &kZero;
    ts_.hot.in_request = true;   // the request's decision chooses: counted or recorded
    ts_.self_timing_on = false;  // its warm loops are not what the service's probes cost
    ts_.ring = detail::SpanRing(16);
    ts_.ring_mask = 15;
    ts_.calls = calls_;
    ts_.calls_mask = 15;
    site_.id.store(id);
  }
  // kSkipped stands for "the budget passes over it" (inside a skip run); kCounted: the sampler
  // does not record (counted, not skipped); kClocked: a phase-1 timing sample, not recorded;
  // kRecorded: recorded. kCountedFull is the hooks' own distinction (a macro's counted call is
  // always a probe's): not measured.
  void run_pair(ProbeKind kind) override {
    if (kind == autoinstrument::kProbeKinds || kind == autoinstrument::kCountedFull) return;
    prepare(kind);
    call();
    reset();
  }
  // run_pair in three steps, for the cold measurement (budget_cold_calibration.h), which evicts
  // the lines prepare() touched before timing call() alone.
  void prepare(ProbeKind kind) {
    detail::Slot& slot = slots_[id_];
    // Timed only when that is the kind under test.
    slot.countdown = kind == autoinstrument::kClocked ? 0 : 1u << 30;
    slot.budget_skip.store(kind == autoinstrument::kSkipped ? 1u << 30 : 0);
    slot.budget_run.store(0);
    slot.budget_p = 0;
    ts_.hot.request_sampled = kind == autoinstrument::kRecorded;
    keep_[id_] = kind == autoinstrument::kRecorded ? ~uint64_t{0} : 0;
    if (kind != last_) publish_thresholds(keep_, scales_);
    last_ = kind;
    ts_.hot.request_weight = 1;
  }
  void call() { detail::Probe p(site_); }
  void reset() {
    ts_.head.store(0, std::memory_order_relaxed);  // every recorded call in the same entries
    ts_.tail.store(0, std::memory_order_relaxed);
    ts_.calls_head.store(0, std::memory_order_relaxed);
    ts_.calls_tail.store(0, std::memory_order_relaxed);
    ts_.calls_tail_seen = 0;
  }
  detail::Hot* hot() { return &ts_.hot; }
  // Back to the table published before the calibration (none: keep every call). The
  // calibration may run after plans were published (the macros' compensation, measured on the
  // first tick after a macro probe ran): clearing the table then kept every call until the next
  // plan.
  void restore_plan() { publish_thresholds(plan_, scales_); }

 private:
  static constexpr unsigned kZero = 0;
  uint32_t id_;
  std::vector<detail::Slot> slots_;
  // The plan's table (other threads' probes keep reading it) with the calibration's own site.
  const std::vector<uint64_t> plan_ = published_thresholds();
  const std::vector<double> scales_ = published_scales();
  std::vector<uint64_t> keep_ = with_site(plan_, id_);
  ProbeKind last_ = autoinstrument::kProbeKinds;
  detail::CallRecord calls_[16] = {};
  detail::ThreadState ts_;
  detail::Site site_{"perfhat.budget.calibration", "", "", 0, detail::kFunction};
};

}  // namespace

autoinstrument::ProbeCosts calibrateMacroProbe(uint32_t free_site) {
  if (detail::g_mode.load() != detail::kEnabled) return {};
  // Well above the registered sites: one registered meanwhile must not find its id in the
  // calibration's tables (it would be passed over as the calibration's site is).
  auto cal = std::make_unique<MacroCalibration>(std::max<uint32_t>(free_site, 1) + kSiteMargin);
  detail::Hot* saved = detail::t_hot;
  detail::t_hot = cal->hot();
  autoinstrument::ProbeCosts c = autoinstrument::calibrate(*cal, &ticks);
  detail::t_hot = saved;
  cal->restore_plan();
  return c;
}

double coldDetectTicks(uint32_t free_site) {
  if (detail::g_mode.load() != detail::kEnabled) return 0;
  auto cal = std::make_unique<MacroCalibration>(std::max<uint32_t>(free_site, 1) + kSiteMargin);
  detail::Hot* saved = detail::t_hot;
  detail::t_hot = cal->hot();
  CacheSweep sweep;
  const uint64_t t =
      coldPairTicks([&] { cal->prepare(autoinstrument::kSkipped); }, [&] { cal->call(); },
                    [&] { cal->reset(); }, [&] { sweep(); }, &fenced);
  detail::t_hot = saved;
  cal->restore_plan();
  return static_cast<double>(t);
}

Costs calibrateProbeCosts(double ns_per_tick, uint32_t free_site) {
  if (detail::g_mode.load() != detail::kEnabled) return {};
  const autoinstrument::ProbeCosts c = calibrateMacroProbe(free_site);
  auto seconds = [&](uint64_t fixed) {
    return static_cast<double>(fixed) / (1 << autoinstrument::kCostShift) * ns_per_tick * 1e-9;
  };
  Costs out;
  out.detect_s = seconds(c.pair[autoinstrument::kSkipped]);
  out.counted_s = std::max(out.detect_s, seconds(c.pair[autoinstrument::kCounted]));
  const double recorded = seconds(c.pair[autoinstrument::kRecorded]);
  out.report_s = recorded > out.detect_s ? recorded - out.detect_s : 0;
  out.cold_s = std::max(0.0, coldDetectTicks(free_site) * ns_per_tick * 1e-9 - out.detect_s);
  return out;
}

}  // namespace perfhat::budget
