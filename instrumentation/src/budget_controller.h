// libperfhat keeps to a collection budget (opt-in: PERFHAT_BUDGET=0.01 allows the collector 1 %
// of the process's CPU). Driven by the engine's background thread once a second:
//   calibrate detection and report costs at the first tick (budget_calibration);
//   each window: the sites' phase-1 totals grouped into classes (budget_classes), the collector's
//   own CPU (its thread's CPU clock) and the process's; the planner re-solves (budget_planner);
//   the per-site recording probabilities are published (budget_runtime); in probing mode the
//   stack sampler runs at the plan's probe rate and its samples are symbolised here.
// Settings (docs/collection-budget.md): PERFHAT_BUDGET, PERFHAT_BUDGET_MODE=rates|probing,
// PERFHAT_BUDGET_CLASSES, PERFHAT_BUDGET_WINDOWS, PERFHAT_BUDGET_PINS (file re-read when it
// changes), PERFHAT_BUDGET_STATUS (JSON written each window).
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "budget_classes.h"
#include "budget_collector_fit.h"
#include "budget_cost_account.h"
#include "budget_insitu.h"
#include "budget_planner.h"
#include "budget_rearm.h"
#include "site_activity.h"
#include "status.h"
#include "thread_annotations.h"

namespace perfhat::budget {

struct Settings {
  bool enabled = false;
  PlannerOptions planner;
  std::string classes, pins_file, status_file;
  std::string error;  // a refused setting (the budget stays off)
  static Settings from_env();
};

// Pins file: "always GLOB" (functions matching GLOB are traced whatever the plan) and
// "weight CLASS W" lines; '#' starts a comment.
struct Pins {
  std::vector<std::string> always;
  std::map<std::string, double> weights;
  std::string error;
  static Pins parse(std::string_view text);
};

// Stack samples gathered so far, per function.
struct SampledFunction {
  std::string function;  // demangled
  uint64_t samples = 0;  // inclusive: the function anywhere on the stack
  uint64_t self = 0;     // the leaf
};

// The clocks a window is measured with: wall time, the process's CPU time and the collector
// thread's own (called on that thread), in seconds. Tests inject their own: on a loaded machine a
// test process gets a fraction of a core, which moves the budget's denominator under the plan.
struct Meter {
  double (*wall)();
  double (*process_cpu)();
  double (*collector_cpu)();
  static Meter system();
};

// The start-up calibration of the per-event costs (calibrateProbeCosts: ns per clock tick, a site
// id above every registered one). Tests inject their own.
using Calibrator = Costs (*)(double ns_per_tick, uint32_t free_site);

class Controller {
 public:
  static Controller& get();
  // The controller if get() made it, else nullptr: a process that never asked for a budget
  // never makes it (its state and first configuration cost a short process page faults).
  static Controller* if_created();
  // Until the next call (Meter::system() restores the real clocks); kept across configure().
  void set_meter(const Meter& m);
  // Until the next call (nullptr restores calibrateProbeCosts); kept across configure().
  void set_calibrator(Calibrator c);
  // Whether no thread holds the controller's lock right now (tests: the calibration runs outside
  // it). Never blocks.
  bool unlocked() const;
  // At engine init: reads the settings. Fails (with the reason) when they are refused.
  detail::Status configure(const Settings& s);
  // Background thread, about once a second.
  void tick() PERFHAT_EXCLUDES(mu_);
  // The background thread's tick(): skipped while a test ticks by hand (below).
  void background_tick() PERFHAT_EXCLUDES(mu_, background_mu_);
  // Tests that tick by hand between their own calls: false waits for a background tick under way
  // and skips the next ones until true again.
  void set_background_ticks(bool on) PERFHAT_EXCLUDES(background_mu_);
  // Engine shutdown: sampler off, every call kept again; the controller's last status written if
  // it was made (without one, only what the engine's budget state holds is reset).
  static void stop_any();

  bool enabled() const;
  Plan plan() const;
  Costs costs() const;
  std::vector<SampledFunction> sampled() const;
  // The status file's JSON; without_sampled leaves out "sampled_functions", for a caller that
  // adds rows of its own (budget_publish).
  std::string status_json(bool without_sampled = false) const;
  std::size_t windows_setting() const;  // PERFHAT_BUDGET_WINDOWS as configured

 private:
  struct SiteState {
    uint64_t count = 0, timed = 0, sum_ticks = 0;  // last window's totals
    uint64_t on_request_threads = 0;               // ... of SiteActivity::on_request_threads
    long klass = -2;                               // -2 = not classified yet
    const void* symbol = nullptr;                  // function start, for stack samples
    std::string qualified;
    int kind = 0;
    double probability = 1;  // the share of its calls the published plan records
    // Probing mode: disarmed through the window that ends at the next tick (its calls are not
    // counted), and its rates in the last window it was armed in.
    bool disarmed = false;
    bool measuring = false;  // armed through that window only to measure its rates again
    // Windows disarmed since it was last armed: what a re-arm window's records stand for too.
    std::size_t unseen_windows = 0;
    double calls_per_s = 0, busy_per_s = 0;
    double request_thread_calls_per_s = 0;  // the calls that may find it cold
  };
  // The three clocks at a tick (Meter).
  struct Clocks {
    double wall = 0, process = 0, collector = 0;
  };
  // What the sites did in one window, summed for the planner and the cost account.
  struct WindowTotals {
    std::vector<ClassWindow> classes;  // per class, in class_names_ order
    // calls_all: the calls the probes detected (and so cost their detection); request roots on
    // top pay their request's context (sampler, trace ids, two clock reads) whether recorded or
    // not.
    double calls_all = 0, calls_unsampled = 0, request_calls = 0, calls_measuring = 0;
    double records_measuring = 0;  // a re-arm window's records (expected: calls x probability)
    double requests = 0;
    // Cold entries (budget_cost_account.h): each armed site's calls on threads that serve
    // requests.
    std::vector<double> armed_calls;
    // Per site, for each class's cold entries (the plan's price of detecting it): the calls in
    // the window, measured or (disarmed) estimated from the last window it was armed in.
    std::vector<std::pair<long, double>> class_site_calls;
    std::map<std::string, double> measured_hz;  // probing: what a re-arm window measured
    bool any_measuring = false, any_disarmed = false;
  };
  // The steps of a tick, in order.
  void start_first_window(const std::vector<detail::SiteActivity>& sites, uint64_t recorded,
                          const Clocks& now) PERFHAT_REQUIRES(mu_);
  WindowTotals measure_sites(const std::vector<detail::SiteActivity>& sites, double window_s,
                             double nspt) PERFHAT_REQUIRES(mu_);
  double price_stack_samples(double nspt) PERFHAT_REQUIRES(mu_);  // the handlers' CPU seconds
  // Whether the window now ending began with start-up records still to export (and updates it).
  bool startup_window(uint64_t recorded) PERFHAT_REQUIRES(mu_);
  // The in-probe prices from the calls the probes timed in situ this window.
  void price_in_situ(double nspt) PERFHAT_REQUIRES(mu_);
  WindowCost measure_cost(const WindowTotals& totals, uint64_t recorded, uint64_t recorded_roots,
                          double sample_cpu_s, const Clocks& now) PERFHAT_REQUIRES(mu_);
  // Per-site recording probabilities, and the sites of classes recorded not at all disarmed.
  void apply_plan(const Plan& plan, const std::vector<detail::SiteActivity>& sites)
      PERFHAT_REQUIRES(mu_);
  void set_probe_rate(double hz) PERFHAT_REQUIRES(mu_);
  // The first tick's calibration, run before tick() takes the lock: its cache sweeps take tens
  // of ms, which a reader of the plan or the status must not wait for. Returns false when the
  // costs are calibrated already (or the budget is off).
  struct Calibration {
    Costs costs;
    detail::SelfTimingFences fences;  // the clock reads' cost in a timed call (probe_self_timing.h)
    double ns_per_tick = 0;           // the clock's rate the calibration ran at
    uint64_t configuration = 0;       // configurations_ when it started (its result is for that)
  };
  bool calibrate_unlocked(Calibration* out) PERFHAT_EXCLUDES(mu_);
  void classify(const std::vector<detail::SiteActivity>& sites, double ns_per_tick)
      PERFHAT_REQUIRES(mu_);
  void reload_pins() PERFHAT_REQUIRES(mu_);
  long class_index(const std::string& name, double weight, bool pinned) PERFHAT_REQUIRES(mu_);
  std::size_t drain_samples() PERFHAT_REQUIRES(mu_);  // returns the stacks drained
  void write_status() PERFHAT_REQUIRES(mu_);
  std::string status_json_locked(bool without_sampled = false) const PERFHAT_REQUIRES(mu_);

  detail::Mutex background_mu_;  // held through a background tick: taken before mu_, never after
  bool background_ticks_ PERFHAT_GUARDED_BY(background_mu_) = true;
  mutable detail::Mutex mu_;
  Meter meter_ PERFHAT_GUARDED_BY(mu_) = Meter::system();
  Calibrator calibrator_ PERFHAT_GUARDED_BY(mu_) = nullptr;
  Settings settings_ PERFHAT_GUARDED_BY(mu_);
  ClassRules rules_ PERFHAT_GUARDED_BY(mu_);
  Pins pins_ PERFHAT_GUARDED_BY(mu_);
  long pins_mtime_ PERFHAT_GUARDED_BY(mu_) = -1;
  Planner planner_ PERFHAT_GUARDED_BY(mu_);
  Costs costs_ PERFHAT_GUARDED_BY(mu_);
  // A recorded call's in-probe report and a taken request root's context: the start-up
  // calibration's, then the in-situ prices once the probes timed enough calls (budget_insitu.h).
  double calibrated_report_s_ PERFHAT_GUARDED_BY(mu_) = 0;
  double inprobe_report_s_ PERFHAT_GUARDED_BY(mu_) = 0;
  double request_s_ PERFHAT_GUARDED_BY(mu_) = 0;
  InSituPrices insitu_ PERFHAT_GUARDED_BY(mu_);
  // The clock reads' cost taken off each timed call (ns, at the calibration's clock rate).
  double fence_ns_ PERFHAT_GUARDED_BY(mu_) = 0, entry_fence_ns_ PERFHAT_GUARDED_BY(mu_) = 0;
  CollectorCostFit collector_fit_ PERFHAT_GUARDED_BY(mu_);  // the export's price per call
  uint64_t sampler_ticks_ PERFHAT_GUARDED_BY(mu_) = 0;      // StackSampler::handler_ticks charged
  uint64_t sampler_taken_ PERFHAT_GUARDED_BY(mu_) = 0;      // StackSampler::taken priced
  double measuring_per_window_s_ PERFHAT_GUARDED_BY(mu_) = 0;  // probing: re-arm cost, spread
  RearmSchedule rearm_ PERFHAT_GUARDED_BY(mu_);                // probing: when to re-arm
  CostParts last_parts_ PERFHAT_GUARDED_BY(mu_);  // the last window's charge (the status)
  // Calls recorded before the first plan (every call), and whether some are still to export
  // (WindowCost::startup), for at most kStartupMaxWindows windows.
  uint64_t startup_records_ PERFHAT_GUARDED_BY(mu_) = 0;
  bool startup_pending_ PERFHAT_GUARDED_BY(mu_) = true;
  std::size_t startup_windows_ PERFHAT_GUARDED_BY(mu_) = 0;
  bool calibrated_ PERFHAT_GUARDED_BY(mu_) = false;
  uint64_t configurations_ PERFHAT_GUARDED_BY(mu_) = 0;  // configure() calls so far
  std::vector<std::string> class_names_ PERFHAT_GUARDED_BY(mu_);
  std::vector<double> class_weights_ PERFHAT_GUARDED_BY(mu_);
  std::vector<bool> class_pinned_ PERFHAT_GUARDED_BY(mu_);
  std::unordered_map<uint32_t, SiteState> sites_ PERFHAT_GUARDED_BY(mu_);
  uint64_t recorded_ PERFHAT_GUARDED_BY(mu_) = 0;
  uint64_t recorded_roots_ PERFHAT_GUARDED_BY(mu_) = 0;  // of recorded_, request roots
  uint32_t named_below_ PERFHAT_GUARDED_BY(mu_) = 1;     // sites whose names are in sites_
  double last_wall_ PERFHAT_GUARDED_BY(mu_) = -1, last_process_ PERFHAT_GUARDED_BY(mu_) = 0,
                    last_thread_ PERFHAT_GUARDED_BY(mu_) = 0;
  std::size_t windows_ PERFHAT_GUARDED_BY(mu_) = 0;
  std::size_t status_window_ PERFHAT_GUARDED_BY(mu_) = 0;  // last written in this window
  std::size_t status_changes_ PERFHAT_GUARDED_BY(mu_) = ~std::size_t{0};  // ... with this plan
  std::unordered_map<const void*, const void*> pc_function_ PERFHAT_GUARDED_BY(mu_);
  std::unordered_map<const void*, SampledFunction> sampled_ PERFHAT_GUARDED_BY(mu_);
  std::string sampler_error_ PERFHAT_GUARDED_BY(mu_);
};

}  // namespace perfhat::budget
