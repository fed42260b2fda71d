#include "budget_controller.h"

#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "budget_calibration.h"
#include "budget_cost_account.h"
#include "budget_runtime.h"
#include "engine.h"
#include "probe_self_timing.h"
#include "stack_sampler.h"
#include "symbolize.h"
#include "tigris.h"

namespace perfhat::budget {
namespace {

double clock_s(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

constexpr std::size_t kMaxCachedPcs = 1 << 16;
constexpr std::size_t kGroupRefreshWindows = 10;
// The status file is rewritten when the plan changes and at least this often, in windows: on the
// sample service, creating and renaming it every second was over half the collector's own CPU.
constexpr std::size_t kStatusEveryWindows = 10;
// Probing mode: a window's samples price a stack sample when there are at least this many.
constexpr uint64_t kMinSamplesPriced = 5;
// A call timed in situ over this long was descheduled or interrupted inside its probe's work:
// not summed (probe_self_timing.h).
constexpr double kSelfTimingCapNs = 50e3;
// The start-up's records are exported within an export interval or two (5 s by default); if
// they never are (no exporter, exports failing), the governor judges windows again after this.
constexpr std::size_t kStartupMaxWindows = 20;

}  // namespace

Meter Meter::system() {
  return {[] { return clock_s(CLOCK_MONOTONIC); }, [] { return clock_s(CLOCK_PROCESS_CPUTIME_ID); },
          [] { return clock_s(CLOCK_THREAD_CPUTIME_ID); }};
}

void Controller::set_meter(const Meter& m) {
  detail::Lock l(mu_);
  meter_ = m;
}

void Controller::set_calibrator(Calibrator c) {
  detail::Lock l(mu_);
  calibrator_ = c;
}

void Controller::background_tick() {
  detail::Lock l(background_mu_);
  if (background_ticks_) tick();
}

void Controller::set_background_ticks(bool on) {
  detail::Lock l(background_mu_);
  background_ticks_ = on;
}

bool Controller::unlocked() const {
  std::mutex& m = mu_.native();
  if (!m.try_lock()) return false;
  m.unlock();
  return true;
}

namespace {
std::atomic<Controller*> g_controller{nullptr};
}  // namespace

Controller& Controller::get() {
  static auto* c = [] {
    auto* made = new Controller();  // used by the background thread until exit
    g_controller.store(made, std::memory_order_release);
    return made;
  }();
  return *c;
}

Controller* Controller::if_created() { return g_controller.load(std::memory_order_acquire); }

detail::Status Controller::configure(const Settings& s) {
  detail::Lock l(mu_);
  settings_ = s;
  planner_ = Planner(s.planner);
  sites_.clear();
  named_below_ = 1;
  class_names_.clear();
  class_weights_.clear();
  class_pinned_.clear();
  sampled_.clear();
  pc_function_.clear();  // its entries name functions only when they first enter sampled_
  pins_ = {};
  pins_mtime_ = -1;
  last_wall_ = -1;
  windows_ = 0;
  status_window_ = 0;
  status_changes_ = ~std::size_t{0};
  calibrated_ = false;
  ++configurations_;
  collector_fit_.clear();
  measuring_per_window_s_ = 0;
  last_parts_ = {};
  rearm_ = {};
  startup_records_ = 0;
  startup_pending_ = true;
  startup_windows_ = 0;
  insitu_.clear();
  fence_ns_ = entry_fence_ns_ = 0;
  detail::g_self_timing_fence.store(0, std::memory_order_relaxed);
  detail::g_self_timing_entry_fence.store(0, std::memory_order_relaxed);
  detail::g_self_timing.store(s.enabled && s.error.empty(), std::memory_order_relaxed);
  // Only a sampler that exists: creating one here would map its ring in every process that
  // turns probes on, budget or not.
  const auto* sampler = sampling::StackSampler::if_created();
  sampler_ticks_ = sampler ? sampler->handler_ticks() : 0;
  sampler_taken_ = sampler ? sampler->taken() : 0;
  clear();
  if (!s.error.empty()) {
    settings_.enabled = false;
    return detail::Status::failure(s.error);
  }
  rules_ = ClassRules::parse(s.classes);
  if (!rules_.error.empty()) {
    settings_.enabled = false;
    detail::g_self_timing.store(false, std::memory_order_relaxed);
    return detail::Status::failure("PERFHAT_BUDGET_CLASSES: " + rules_.error);
  }
  return detail::Status::success();
}

bool Controller::enabled() const {
  detail::Lock l(mu_);
  return settings_.enabled;
}

void Controller::stop_any() {
  // Not get(): its ring (about 1 MB, zeroed) would be made at every exit just to be stopped.
  if (auto* sampler = sampling::StackSampler::if_created()) sampler->stop();
  clear();
  detail::g_self_timing.store(false, std::memory_order_relaxed);
  detail::Engine::get().set_budget_disarmed({});
  Controller* c = if_created();
  if (c == nullptr) return;
  detail::Lock l(c->mu_);
  if (c->settings_.enabled && c->windows_ > 1)
    c->write_status();  // the last plan, whatever its age
}

void Controller::reload_pins() {
  if (settings_.pins_file.empty()) return;
  struct stat st {};
  long mtime = ::stat(settings_.pins_file.c_str(), &st) == 0
                   ? static_cast<long>(st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000)
                   : 0;
  if (mtime == pins_mtime_) return;
  pins_mtime_ = mtime;
  std::string text;
  if (mtime != 0) {
    std::ifstream in(settings_.pins_file, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str().substr(0, 1 << 20);
  }
  pins_ = Pins::parse(text);
  if (!pins_.error.empty())
    std::fprintf(stderr, "perfhat: PERFHAT_BUDGET_PINS %s: %s\n", settings_.pins_file.c_str(),
                 pins_.error.c_str());
  for (auto& [id, s] : sites_) s.klass = -2;  // re-classify under the new pins
}

long Controller::class_index(const std::string& name, double weight, bool pinned) {
  for (std::size_t i = 0; i < class_names_.size(); ++i)
    if (class_names_[i] == name) return static_cast<long>(i);
  class_names_.push_back(name);
  class_weights_.push_back(weight);
  class_pinned_.push_back(pinned);
  return static_cast<long>(class_names_.size() - 1);
}

void Controller::classify(const std::vector<detail::SiteActivity>& sites, double ns_per_tick) {
  bool has_groups = false;
  for (const ClassRule& r : rules_.rules) has_groups |= r.kind == ClassRule::Kind::kGroup;
  if (has_groups && windows_ % kGroupRefreshWindows == 1)
    for (auto& [id, s] : sites_) s.klass = -2;
  std::vector<std::vector<bool>> members(rules_.rules.size());
  bool need = false;
  for (const detail::SiteActivity& a : sites) need |= sites_[a.id].klass == -2;
  if (!need) return;
  if (has_groups) {  // the Tigris groups over the sites' phase-1 metrics
    std::vector<tigris::EventMetrics> events;
    for (const detail::SiteActivity& a : sites) {
      tigris::EventMetrics e;
      e.name = sites_[a.id].qualified;
      e.metrics[std::string(tigris::metric::kInvocationFrequency)] = static_cast<double>(a.count);
      e.metrics[std::string(tigris::metric::kExecutionTime)] =
          a.timed ? static_cast<double>(a.sum_ticks) * ns_per_tick / static_cast<double>(a.timed)
                  : 0;
      events.push_back(std::move(e));
    }
    for (std::size_t r = 0; r < rules_.rules.size(); ++r) {
      if (rules_.rules[r].kind != ClassRule::Kind::kGroup) continue;
      members[r] =
          tigris::classify(*rules_.rules[r].group, events, tigris::Bindings::defaults()).relevant;
    }
  }
  for (std::size_t i = 0; i < sites.size(); ++i) {
    const detail::SiteActivity& a = sites[i];
    SiteState& st = sites_[a.id];
    if (st.klass != -2) continue;
    SiteFacts f;
    if (a.id >= named_below_ || st.qualified.empty()) {
      st.qualified = qualifiedName(a.function.empty() ? a.name : a.function);
      st.kind = a.kind;
    }
    f.qualified = st.qualified;
    f.kind = st.kind;
    long k = -1;
    for (const std::string& glob : pins_.always) {
      if (tigris::glob_match(glob, f.qualified)) {
        k = class_index("always:" + glob, 1, true);
        break;
      }
    }
    if (k < 0) {
      std::vector<bool> in_group(rules_.rules.size(), false);
      for (std::size_t r = 0; r < rules_.rules.size(); ++r)
        in_group[r] = i < members[r].size() && members[r][i];
      long r = matchRule(rules_, f, in_group);
      k = r >= 0 ? class_index(rules_.rules[r].name, rules_.rules[r].weight, false)
                 : class_index(namespaceOf(f.qualified), 1, false);
    }
    st.klass = k;
    if (st.symbol == nullptr && a.addr != nullptr) st.symbol = symbolize::resolve(a.addr).start;
  }
}

std::size_t Controller::drain_samples() {
  // Copied out first: the ring's callback runs outside this object's lock analysis.
  std::vector<std::vector<void*>> stacks;
  sampling::StackSampler::get().drain(
      [&](void* const* pcs, uint32_t depth) { stacks.emplace_back(pcs, pcs + depth); });
  for (const std::vector<void*>& pcs : stacks) {
    std::set<const void*> seen;
    for (std::size_t i = 0; i < pcs.size(); ++i) {
      // A return address points after its call: look up the byte before it.
      const void* pc = static_cast<const char*>(pcs[i]) - (i == 0 ? 0 : 1);
      auto it = pc_function_.find(pc);
      if (it == pc_function_.end()) {
        if (pc_function_.size() >= kMaxCachedPcs) pc_function_.clear();
        symbolize::Symbol sym = symbolize::resolve(pc);
        it = pc_function_.emplace(pc, sym.start).first;
        if (sym.start != nullptr && !sampled_.count(sym.start))
          sampled_[sym.start].function = sym.demangled.empty() ? sym.mangled : sym.demangled;
      }
      const void* fn = it->second;
      if (fn == nullptr) continue;
      SampledFunction& f = sampled_[fn];
      if (i == 0) ++f.self;
      if (seen.insert(fn).second) ++f.samples;
    }
  }
  return stacks.size();
}

bool Controller::calibrate_unlocked(Calibration* out) {
  Calibrator calibrate = nullptr;
  {
    detail::Lock l(mu_);
    if (!settings_.enabled || calibrated_) return false;
    out->configuration = configurations_;
    calibrate = calibrator_ != nullptr ? calibrator_ : &calibrateProbeCosts;
  }
  std::vector<detail::SiteActivity> sites;
  uint64_t recorded = 0;
  // No names: only the ids matter here.
  const double nspt = detail::Engine::get().budget_snapshot(sites, recorded, ~uint32_t{0});
  uint32_t free_site = 1;
  for (const detail::SiteActivity& a : sites) free_site = std::max(free_site, a.id + 1);
  out->costs = calibrate(nspt, free_site);
  out->fences = detail::measure_fence_ticks();  // what the in-situ intervals leave out
  out->ns_per_tick = nspt;
  return true;
}

void Controller::tick() {
  // Only the background thread ticks, so no other calibration can run meanwhile; a configure()
  // in between (tests) drops this one's result: its settings may differ.
  Calibration calibrated;
  const bool fresh = calibrate_unlocked(&calibrated);
  detail::Lock l(mu_);
  if (!settings_.enabled) return;
  if (fresh && !calibrated_ && calibrated.configuration == configurations_) {
    costs_ = calibrated.costs;
    calibrated_report_s_ = inprobe_report_s_ = request_s_ = costs_.report_s;
    const detail::SelfTimingFences& f = calibrated.fences;
    fence_ns_ = static_cast<double>(f.pair) * calibrated.ns_per_tick;
    entry_fence_ns_ = static_cast<double>(f.entry) * calibrated.ns_per_tick;
    detail::g_self_timing_fence.store(f.pair, std::memory_order_relaxed);
    detail::g_self_timing_entry_fence.store(f.entry, std::memory_order_relaxed);
    calibrated_ = true;
  }
  if (!calibrated_) return;  // configured anew while calibrating: the next tick calibrates
  detail::Engine& engine = detail::Engine::get();
  std::vector<detail::SiteActivity> sites;
  uint64_t recorded = 0;
  uint64_t recorded_roots = 0;
  const double nspt = engine.budget_snapshot(sites, recorded, named_below_, &recorded_roots);
  if (nspt > 0)
    detail::g_self_timing_cap.store(static_cast<uint64_t>(kSelfTimingCapNs / nspt),
                                    std::memory_order_relaxed);
  const Clocks now{meter_.wall(), meter_.process_cpu(), meter_.collector_cpu()};
  ++windows_;
  reload_pins();
  classify(sites, nspt);
  for (const detail::SiteActivity& a : sites) named_below_ = std::max(named_below_, a.id + 1);
  if (last_wall_ < 0) {  // the first window starts here
    recorded_roots_ = recorded_roots;
    start_first_window(sites, recorded, now);
    return;
  }
  for (std::size_t i = 0; i < class_names_.size(); ++i) {
    auto w = pins_.weights.find(class_names_[i]);
    if (w != pins_.weights.end()) class_weights_[i] = w->second;
  }
  const WindowTotals totals = measure_sites(sites, now.wall - last_wall_, nspt);
  const double sample_cpu_s = settings_.planner.probing ? price_stack_samples(nspt) : 0;
  price_in_situ(nspt);
  const WindowCost cost = measure_cost(totals, recorded, recorded_roots, sample_cpu_s, now);
  const Plan& plan = planner_.observe(totals.classes, cost, costs_);
  apply_plan(plan, sites);
  if (settings_.planner.probing) set_probe_rate(plan.probing_hz);
  if (windows_ == 2 || plan.changes != status_changes_ ||
      windows_ - status_window_ >= kStatusEveryWindows) {
    write_status();
    status_changes_ = plan.changes;
    status_window_ = windows_;
  }
}

void Controller::start_first_window(const std::vector<detail::SiteActivity>& sites,
                                    uint64_t recorded, const Clocks& now) {
  for (const detail::SiteActivity& a : sites) {
    SiteState& s = sites_[a.id];
    s.count = a.count;
    s.timed = a.timed;
    s.sum_ticks = a.sum_ticks;
    s.on_request_threads = a.on_request_threads;
  }
  recorded_ = recorded;
  insitu_.add(detail::self_timing_totals(), 0, settings_.planner.windows);  // the starting totals
  last_wall_ = now.wall;
  last_process_ = now.process;
  last_thread_ = now.collector;
}

Controller::WindowTotals Controller::measure_sites(const std::vector<detail::SiteActivity>& sites,
                                                   double window_s, double nspt) {
  WindowTotals t;
  t.classes.resize(class_names_.size());
  for (std::size_t i = 0; i < class_names_.size(); ++i)
    t.classes[i] = {class_names_[i], 0, 0, class_weights_[i], class_pinned_[i]};
  auto in_window = [&](long klass) {
    return klass >= 0 && static_cast<std::size_t>(klass) < t.classes.size();
  };
  for (const detail::SiteActivity& a : sites) {
    SiteState& s = sites_[a.id];
    t.any_measuring = t.any_measuring || s.measuring;
    t.any_disarmed = t.any_disarmed || s.disarmed;
    if (s.disarmed) {
      // Disarmed for the whole window (probing mode): its probes counted nothing and cost
      // nothing. The class's rates stand at the last window the site was armed in.
      if (in_window(s.klass)) {
        t.classes[s.klass].calls += s.calls_per_s * window_s;
        t.classes[s.klass].busy_s += s.busy_per_s * window_s;
      }
      if (a.kind == detail::kRequest) t.requests += s.calls_per_s * window_s;
      t.class_site_calls.emplace_back(s.klass, s.request_thread_calls_per_s * window_s);
      s.count = a.count;
      s.timed = a.timed;
      s.sum_ticks = a.sum_ticks;
      s.on_request_threads = a.on_request_threads;
      continue;
    }
    const double calls = static_cast<double>(a.count - std::min(a.count, s.count));
    const uint64_t dt = a.timed - std::min(a.timed, s.timed);
    const uint64_t dticks = a.sum_ticks - std::min(a.sum_ticks, s.sum_ticks);
    // Mean duration: this window's timed calls, else every timed call so far.
    double mean_ns = dt > 0 ? static_cast<double>(dticks) * nspt / static_cast<double>(dt)
                     : a.timed > 0
                         ? static_cast<double>(a.sum_ticks) * nspt / static_cast<double>(a.timed)
                         : 0;
    // Calls on threads that serve requests: only those can find the site's lines cold. (A
    // thread retiring takes its calls out of the sum: no negative windows.)
    const double request_thread_calls = static_cast<double>(
        a.on_request_threads - std::min(a.on_request_threads, s.on_request_threads));
    s.count = a.count;
    s.timed = a.timed;
    s.sum_ticks = a.sum_ticks;
    s.on_request_threads = a.on_request_threads;
    if (window_s > 0) {
      s.calls_per_s = calls / window_s;
      s.busy_per_s = calls * mean_ns * 1e-9 / window_s;
      s.request_thread_calls_per_s = request_thread_calls / window_s;
    }
    // A site armed only to measure its rate again: its detection is the plan's, spread below.
    (s.measuring ? t.calls_measuring : t.calls_all) += calls;
    if (s.measuring) t.records_measuring += calls * std::clamp(s.probability, 0.0, 1.0);
    if (!s.measuring) t.armed_calls.push_back(request_thread_calls);
    t.class_site_calls.emplace_back(s.klass, request_thread_calls);
    if (a.kind == detail::kRequest) t.requests += calls;
    if (s.measuring && s.klass >= 0 && static_cast<std::size_t>(s.klass) < class_names_.size())
      t.measured_hz[class_names_[s.klass]] += s.calls_per_s;
    // A request root the budget passed over opened no request context: only the taken ones pay.
    if (a.kind == detail::kRequest) t.request_calls += calls * std::clamp(s.probability, 0.0, 1.0);
    if (s.probability >= 1) t.calls_unsampled += calls;
    if (in_window(s.klass)) {
      t.classes[s.klass].calls += calls;
      t.classes[s.klass].busy_s += calls * mean_ns * 1e-9;
    }
  }
  for (const auto& [klass, calls] : t.class_site_calls)
    if (in_window(klass)) t.classes[klass].cold_entries += coldEntries({calls}, t.requests);
  return t;
}

double Controller::price_stack_samples(double nspt) {
  // Probing: the stack samples' handlers ran on the application threads, timed there.
  drain_samples();
  const sampling::StackSampler& sampler = sampling::StackSampler::get();
  const uint64_t ticks = sampler.handler_ticks(), taken = sampler.taken();
  const double sample_cpu_s =
      static_cast<double>(ticks - std::min(ticks, sampler_ticks_)) * nspt * 1e-9;
  // The price of one sample for the plan: this window's mean, smoothed.
  if (const uint64_t n = taken - std::min(taken, sampler_taken_); n >= kMinSamplesPriced) {
    const double each = sample_cpu_s / static_cast<double>(n);
    costs_.sample_s = costs_.sample_s > 0 ? 0.7 * costs_.sample_s + 0.3 * each : each;
  }
  sampler_ticks_ = ticks;
  sampler_taken_ = taken;
  return sample_cpu_s;
}

void Controller::price_in_situ(double nspt) {
  insitu_.add(detail::self_timing_totals(), nspt, settings_.planner.windows);
  inprobe_report_s_ = insitu_.step(detail::kSelfTimedRecord, calibrated_report_s_);
  request_s_ = insitu_.step(detail::kSelfTimedRequest, calibrated_report_s_);
}

WindowCost Controller::measure_cost(const WindowTotals& t, uint64_t recorded,
                                    uint64_t recorded_roots, double sample_cpu_s,
                                    const Clocks& now) {
  const double d_recorded = static_cast<double>(recorded - std::min(recorded, recorded_));
  const double d_roots =
      static_cast<double>(recorded_roots - std::min(recorded_roots, recorded_roots_));
  recorded_ = recorded;
  recorded_roots_ = recorded_roots;
  WindowCost cost;
  cost.wall_s = now.wall - last_wall_;
  cost.process_cpu_s = now.process - last_process_;
  cost.collector_cpu_s = now.collector - last_thread_;
  last_wall_ = now.wall;
  last_process_ = now.process;
  last_thread_ = now.collector;
  cost.startup = startup_window(recorded);
  collector_fit_.add(d_recorded, cost.collector_cpu_s, cost.wall_s);
  cost.fixed_cpu_s = collector_fit_.fixed_per_s() * cost.wall_s;
  costs_.report_s = inprobe_report_s_ + std::max(0.0, collector_fit_.per_call_s());
  // Every call pays at least the pass-over (detect); a recorded call its report on top; a call at
  // a site the budget does not sample that is not recorded either (the request sampler's) pays
  // the full counted path.
  // Probing: the windows that re-arm untraced sites to measure them cost their detection; charged
  // spread over the windows between two re-arms, so the governor does not cut the budget for the
  // one window that re-arms. Set at each re-arm window (zero when its sites were quiet), and back
  // to zero once nothing is left untraced, so a charge for re-arm windows that no longer happen
  // does not linger.
  if (t.any_measuring) {
    rearm_.measured(t.measured_hz);
    measuring_per_window_s_ =
        (t.calls_measuring * costs_.detect_s + t.records_measuring * costs_.report_s) /
        static_cast<double>(rearm_.every());
  } else if (!t.any_disarmed) {
    measuring_per_window_s_ = 0;
  }
  WindowCounts counts;
  counts.detected = t.calls_all;
  // A root's record is in its price; a re-arm window's records are in the measuring charge.
  counts.recorded = std::max(0.0, d_recorded - d_roots - t.records_measuring);
  counts.counted_unrecorded = t.calls_unsampled - d_recorded;
  counts.request_roots_taken = t.request_calls;
  // One in kSelfTimingPeriod entries to Probe::begin is timed, whatever it then does.
  counts.passed_entries_s = insitu_.last_window_s(detail::kSelfTimedPassed) *
                            static_cast<double>(detail::kSelfTimingPeriod);
  counts.cold_entries = coldEntries(t.armed_calls, t.requests);
  counts.measuring_s = measuring_per_window_s_;
  counts.sample_cpu_s = sample_cpu_s;
  counts.collector_cpu_s = cost.collector_cpu_s;
  last_parts_ = accountWindow(counts, costs_, inprobe_report_s_, request_s_);
  cost.probe_cost_s = last_parts_.probes_s();
  return cost;
}

bool Controller::startup_window(uint64_t recorded) {
  // The first measured window ran before any plan: everything recorded so far is the start-up's.
  if (windows_ == 2) startup_records_ = recorded;
  if (!startup_pending_) return false;
  const Counters c = detail::Engine::get().counters();
  const uint64_t gone = c.spans_exported + c.spans_to_aggregates + c.spans_dropped_export;
  startup_pending_ = gone < startup_records_ && ++startup_windows_ < kStartupMaxWindows;
  return true;  // this window began with them pending
}

void Controller::apply_plan(const Plan& plan, const std::vector<detail::SiteActivity>& sites) {
  // Per-site recording probabilities.
  uint32_t max_id = 0;
  for (const detail::SiteActivity& a : sites) max_id = std::max(max_id, a.id);
  std::vector<double> probability(max_id + 1, 1.0);
  for (const detail::SiteActivity& a : sites) {
    SiteState& st = sites_[a.id];
    long k = st.klass;
    if (k >= 0) {
      for (const ClassPlan& c : plan.classes)
        if (c.name == class_names_[k]) probability[a.id] = c.fraction;
    }
    st.probability = probability[a.id];
  }
  // Classes the plan records none of are disarmed, so their calls cost what a disabled probe
  // costs: probing mode's untraced classes, left to the stack sampler (the paper's probing
  // model detects traced classes only), and the classes rates mode leaves undetected when
  // detecting them all does not fit the budget. Re-arm windows (budget_rearm.h) arm them all,
  // to measure their rates again. Request roots of such classes too: a request no recorded
  // call runs in needs no context, and recorded calls in one start traces of their own.
  bool any_untraced = false;
  for (const detail::SiteActivity& a : sites) {
    const SiteState& st = sites_[a.id];
    any_untraced = any_untraced || (st.klass >= 0 && st.probability <= 0);
  }
  const bool rearm = any_untraced && rearm_.arm(windows_);
  std::vector<bool> off(max_id + 1, false);
  std::size_t measuring = 0;
  for (const detail::SiteActivity& a : sites) {
    SiteState& st = sites_[a.id];
    const bool untraced = st.klass >= 0 && st.probability <= 0;
    off[a.id] = untraced && !rearm;
    st.disarmed = off[a.id];
    st.measuring = untraced && rearm;
    // A request root is not recorded to measure it: a root taken opens its request's context,
    // in which every recordable call is recorded at the root's weight.
    measuring += st.measuring && a.kind != detail::kRequest ? 1 : 0;
    if (!untraced) st.unseen_windows = 0;
  }
  // A re-arm window also records a few calls of each site it arms, weighted for the windows the
  // site was disarmed in: without them an untraced class's durations and weighted counts are
  // only those of the windows before it was disarmed (the start-up's, all calls recorded while
  // caches and the program were cold), never its steady state.
  std::vector<double> scale;
  if (measuring > 0) scale.assign(max_id + 1, 1.0);
  for (const detail::SiteActivity& a : sites) {
    SiteState& st = sites_[a.id];
    if (st.disarmed) ++st.unseen_windows;
    if (!st.measuring || a.kind == detail::kRequest) continue;
    const double span = static_cast<double>(st.unseen_windows + 1);
    probability[a.id] = rearmRecordProbability(plan.allowed_cpu_per_s, costs_.report_s, measuring,
                                               span, st.calls_per_s);
    scale[a.id] = span;
    st.probability = probability[a.id];
    st.unseen_windows = 0;
  }
  publish(probability, scale);
  detail::Engine::get().set_budget_disarmed(off);
}

void Controller::set_probe_rate(double hz) {
  auto& sampler = sampling::StackSampler::get();
  if (std::abs(hz - sampler.rate()) <= 0.1 * std::max(hz, 1.0)) return;
  if (detail::Status set = sampler.set_rate(hz); !set && sampler_error_ != set.error) {
    sampler_error_ = std::move(set.error);
    std::fprintf(stderr, "perfhat: stack sampler off: %s\n", sampler_error_.c_str());
  }
}

}  // namespace perfhat::budget
