#include "budget_calibration.h"

#include <memory>

#include "engine.h"
#include "probe_calibration.h"

namespace perfhat::budget {
namespace {

using autoinstrument::ProbeKind;

uint64_t ticks() { return detail::now_ticks(); }

// The probe's own site on private slots: site id 1, a thread state no export ever drains.
class MacroCalibration final : public autoinstrument::CalibrationTarget {
 public:
  MacroCalibration() {
    ts_.hot.slots = slots_;
    ts_.hot.capacity = 2;
    ts_.hot.owner = &ts_;
    ts_.hot.rng = 0x9E3779B97F4A7C15ull;
    ts_.hot.eh_uncaught = &kZero;
    ts_.hot.in_request = true;  // the request's decision chooses: counted or recorded
    ts_.ring.reset(new detail::SpanRecord[16]);
    ts_.ring_mask = 15;
    ts_.calls = calls_;
    ts_.calls_mask = 15;
    site_.id.store(1);
  }
  void run_pair(ProbeKind kind) override {
    if (kind != autoinstrument::kCounted && kind != autoinstrument::kRecorded) return;
    slots_[1].countdown = 1u << 30;  // never a timing sample: only the decision under test
    ts_.hot.request_sampled = kind == autoinstrument::kRecorded;
    ts_.hot.request_weight = 1;
    { detail::Probe p(site_); }
    ts_.head.store(0, std::memory_order_relaxed);  // every recorded call in the same entries
    ts_.tail.store(0, std::memory_order_relaxed);
    ts_.calls_head.store(0, std::memory_order_relaxed);
    ts_.calls_tail.store(0, std::memory_order_relaxed);
    ts_.calls_tail_seen = 0;
  }
  detail::Hot* hot() { return &ts_.hot; }

 private:
  static constexpr unsigned kZero = 0;
  alignas(64) detail::Slot slots_[2];
  detail::CallRecord calls_[16] = {};
  detail::ThreadState ts_;
  detail::Site site_{"perfhat.budget.calibration", "", "", 0, detail::kFunction};
};

}  // namespace

Costs calibrateProbeCosts(double ns_per_tick) {
  if (detail::g_mode.load() != detail::kEnabled) return {};
  auto cal = std::make_unique<MacroCalibration>();
  detail::Hot* saved = detail::t_hot;
  detail::t_hot = cal->hot();
  autoinstrument::ProbeCosts c = autoinstrument::calibrate(*cal, &ticks);
  detail::t_hot = saved;
  auto seconds = [&](uint64_t fixed) {
    return static_cast<double>(fixed) / (1 << autoinstrument::kCostShift) * ns_per_tick * 1e-9;
  };
  Costs out;
  out.detect_s = seconds(c.pair[autoinstrument::kCounted]);
  const double recorded = seconds(c.pair[autoinstrument::kRecorded]);
  out.report_s = recorded > out.detect_s ? recorded - out.detect_s : 0;
  return out;
}

}  // namespace perfhat::budget
