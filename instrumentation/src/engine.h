// The recording engine behind perfhat.hpp: site registry, per-thread state (phase-1 slots and a
// lock-free span ring), Tigris analysis cycle, request sampler and the export pipeline, driven by
// one background thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "adaptive_sampler.h"
#include "background_wake.h"
#include "batch_exporter.h"
#include "histogram.h"
#include "native_thread.h"
#include "perfhat/exporter.hpp"
#include "site_activity.h"
#include "span_record.h"
#include "thread_annotations.h"
#include "tigris.h"
#include "variant_mask.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace perfhat::detail {

extern std::atomic<uint64_t (*)()> g_tick_source;  // injectable clock; nullptr = TSC
[[gnu::cold]] int ensure_initialized() noexcept;   // slow path of the first probe

inline uint64_t now_ticks() noexcept {
  auto src = g_tick_source.load(std::memory_order_relaxed);
  if (__builtin_expect(src != nullptr, 0)) return src();
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  extern uint64_t steady_ns() noexcept;
  return steady_ns();
#endif
}

// The background thread's tick: the sampler's rate, the collection budget, the clock's
// calibration and XRay's counting windows move once per tick.
inline constexpr double kBackgroundTickS = 1.0;

// Aggregate mode: a probe's caller is packed as site << 48 | invocation number.
inline constexpr uint64_t kInvocationMask = (uint64_t{1} << 48) - 1;

struct ThreadState {
  Hot hot;
  uint64_t tid = 0;
  // Span context (owning thread only).
  uint64_t trace_hi = 0, trace_lo = 0, current_span = 0, span_counter = 0;
  int request_depth = 0;
  uint64_t probe_fixed = 0;  // macro probes' cost so far, fixed point (macro_compensation.h)
  // Clocked entries until the next one timed in situ, and whether this thread's are timed at all
  // (probe_self_timing.h: the first gap is drawn at registration; the start-up calibrations'
  // private thread states are not timed).
  uint32_t self_timing_left = 1;
  bool self_timing_on = true;
  // The collection budget's weight for the last call it took at this site (budget_runtime.h):
  // a run drawn before a rate change ends at a call worth 1 / the rate it was drawn with.
  uint32_t budget_weight_site = 0;
  float budget_weight = 1;
  // A re-arm window's record open on this thread (budget_rearm.h): its span id, 0 for none; and
  // whether take() just kept one (Probe::begin then notes the span it opens).
  uint64_t rearm_span = 0;
  bool rearm_kept = false;
  // Attributes of the recording spans open on this thread, innermost last.
  static constexpr int kMaxRecordingDepth = 64;
  int recording_depth = 0;
  uint8_t attr_count[kMaxRecordingDepth] = {};
  Attr attrs[kMaxRecordingDepth][4];
  // SPSC ring: the owning thread produces, the background thread consumes.
  SpanRing ring;
  uint64_t ring_mask = 0;
  std::atomic<uint64_t> head{0}, tail{0};
  std::atomic<uint64_t> recorded{0}, dropped{0};
  // Of `recorded`, the request roots: the collection budget prices their record with their
  // request's context (both are in a timed root's intervals, probe_self_timing.h).
  std::atomic<uint64_t> recorded_roots{0};
  std::atomic<uint64_t> to_aggregates{0};  // span ring full: the call went to the call ring
  std::atomic<bool> alive{true};
  size_t slots_bytes = 0;
  // Aggregate export mode: the innermost recording probe's site and invocation number (the
  // caller of the next recorded call; owning thread), and the SPSC ring of CallRecords the
  // background thread folds into histograms (reserved with the thread, committed as used).
  uint32_t agg_site = 0;
  uint64_t agg_invocation = 0, agg_invocations = 0;
  CallRecord* calls = nullptr;
  uint64_t calls_mask = 0;
  uint64_t calls_tail_seen = 0;  // owning thread's copy of calls_tail, reloaded when full
  std::atomic<uint64_t> calls_head{0}, calls_tail{0};
  std::atomic<uint64_t> calls_dropped{0};
  // Background thread: the caller invocation counted last per site and caller, for the
  // distinct-parents count (invocation numbers are per thread).
  std::vector<std::vector<std::pair<uint32_t, uint64_t>>> last_parent;
  // Background thread: (invocation, Σ ticks of its direct children folded so far) of the calls
  // still open on this thread, innermost last (fold_self_time).
  std::vector<std::pair<uint64_t, uint64_t>> open_children;
};

// Metric totals of one site across threads (analysis and aggregate export).
// sum_ticks / timed estimates the mean duration; window_calls calls started in [first, last]
// (exact per thread; across threads calls after a thread's last timed one are left out).
struct SiteTotals {
  uint64_t count = 0, timed = 0, sum_ticks = 0, errors = 0, first = ~uint64_t{0}, last = 0;
  uint64_t window_calls = 0;
  uint64_t size_n = 0, sessions = 0;
  double size_sum = 0, size_sq = 0;
  double overflow_n = 0, overflow_ticks = 0, overflow_errors = 0;  // Slot::overflow_*
  void add(const Slot& s);
  void add(const SiteTotals& o);
};

struct SiteInfo {
  Site* site = nullptr;
  std::string name, function, file, mangled;
  uint32_t line = 0;
  SiteKind kind = kFunction;
  const void* addr = nullptr;
  bool resolved = false;
};

// The exit-time flush is registered again after each new kind of export result (engine.cc).
void register_exit_flush_after(ExportResult r, const ExportBatch& b);

// The engine is the batch exporter's source (export_source.cc): its threads' span rings and the
// interval's aggregate rows.
class Engine : private ExportSource {
 public:
  static Engine& get();
  bool init(const Config& cfg, std::shared_ptr<Exporter> exporter);
  void shutdown();
  void flush();
  void analyze_now();
  Counters counters();
  std::string last_error();
  bool set_filter(const std::string& f);
  void set_sampling_rate(double r);
  double sampling_rate();
  void set_cycle(double s);

  // The Tigris selection carried from the program's last process (XRay mode, selection_store.h):
  // registers `sites` and makes exactly those relevant, until this process's own first cycle.
  void carry_relevant(const std::vector<Site*>& sites) PERFHAT_EXCLUDES(mu_);
  // Where the running configuration keeps carried selections ("" for nowhere), and the hash of
  // what besides the program decides a selection (selection_config_hash).
  std::string selection_dir() PERFHAT_EXCLUDES(mu_);
  uint64_t selection_config() PERFHAT_EXCLUDES(mu_);

  Hot* prepare(Site& site, const void* ret_addr);
  // Probes on or off (g_mode), and every registered site's `armed` byte with it (site_arming.cc).
  void set_mode(int mode) PERFHAT_EXCLUDES(mu_);
  // A site met while probes are off: registered and disarmed, so later calls cost one test and
  // turning probes on finds it (site_arming.cc).
  void park(Site& site, const void* ret_addr) PERFHAT_EXCLUDES(mu_);
  void begin_request(Hot* h, const Site& site);
  void end_request(Hot* h, const Site& site, uint64_t start, uint64_t end);
  void record_span(Hot* h, const Site& site, uint64_t start, uint64_t end, const Probe& p,
                   uint64_t parent);
  // Not inlined into record_span, whose overflow path it is: keeps the span path's frame small.
  // `own_call`: begin_call() opened this call (aggregate mode), so the thread's innermost
  // invocation is this call's own and its self time can be told (not for a span sent here).
  [[gnu::noinline]] void aggregate_call(Hot* h, uint32_t site, uint64_t start, uint64_t end,
                                        const Probe& p, uint64_t parent, bool own_call);
  void thread_exit(ThreadState* ts);

  double now_s();
  uint64_t to_unix_ns(uint64_t tick);
  // The collection budget's view (engine_budget.cc): every site's totals, the calls recorded so
  // far; returns ns per tick. Names and addresses only for site ids >= named_below (the budget
  // asks once per site: copying every name every second was most of its own cost).
  // `recorded_roots`: of `recorded`, the request roots (ThreadState::recorded_roots).
  double budget_snapshot(std::vector<SiteActivity>& out, uint64_t& recorded, uint32_t named_below,
                         uint64_t* recorded_roots = nullptr);
  // Sends the collection budget's status to the exporter when due (budget_publish.cc).
  void publish_budget();
  // The collection budget's disarmed sites (probing mode's untraced classes, which the stack
  // sampler covers): off[id] set = the site costs what a disabled probe costs until the next
  // call; an empty vector re-arms them all (site_arming.cc).
  void set_budget_disarmed(const std::vector<bool>& off) PERFHAT_EXCLUDES(mu_);

  // The background thread on demand (engine.cc). With `on` set when the next activation runs,
  // that activation leaves the thread to start when first needed: the first recorded call
  // once the thread's first tick or first export would have come (background_due), a ring half
  // full, a collection budget, or start_background(). XRay sets it around its start-up and
  // starts the thread at once unless the process starts from a carried selection: such
  // processes are mostly short runs of a program run again and again, which end before the
  // thread's first tick, and the thread's creation, wakes and shared file table were the largest
  // part of their cost (bench/README.md).
  static void request_background_on_demand(bool on);
  // Starts the background thread unless it runs, probes were never activated or it was stopped.
  void start_background() PERFHAT_EXCLUDES(bg_mu_);
  // Recording paths, with the call's end tick: starts a thread left on demand once it is due.
  void background_due(uint64_t now_tick) {
    if (now_tick >= bg_due_ticks_.load(std::memory_order_relaxed)) [[unlikely]]
      start_background();
  }

  // What activation does outside every lock (engine.cc): the exporter's start and the exit
  // flush. Called by the public entry points after init/set_enabled, and after the lazy init.
  void finish_activation();

 private:
  Engine() = default;
  void run_background();
  static void* background_main(void* engine);
  // Wakes the background thread now (a ring half full), starting it if it was left on demand.
  void wake_background() {
    if (bg_due_ticks_.load(std::memory_order_relaxed) != ~uint64_t{0}) start_background();
    bg_wake_.request();
  }
  // How long the background thread sleeps before its next wake.
  std::chrono::milliseconds background_wait(double last_tick, double last_analysis);
  // Stops the background thread; with `final`, it exports what is pending first (on its own
  // thread, whose thread-locals are alive even when exit() runs on another). Returns whether it
  // did that final export.
  bool stop_background(bool final);
  void analyze() PERFHAT_EXCLUDES(mu_);
  void update_threshold(double rate);
  void calibrate_clock(bool initial);
  void settle_clock();
  // The tick rate every conversion of ticks to time uses (settled on first use once it can be).
  double ns_per_tick() {
    if (!clock_settled_.load(std::memory_order_acquire)) [[unlikely]]
      settle_clock();
    return ns_per_tick_.load(std::memory_order_relaxed);
  }
  // The clock's calibration, the background thread, the exit flush and the collection budget:
  // by init when probes start on, else by the first set_mode(kEnabled) after it (engine.cc).
  void activate();
  std::vector<SiteTotals> totals() PERFHAT_REQUIRES(mu_);
  // Registers `site` if new (admitted by scope and variant, else kExcludedSite) and returns its
  // id; the site is armed or not by then (registry.cc).
  uint32_t register_site(Site& site, const void* ret_addr) PERFHAT_REQUIRES(mu_);
  // Stores a registered site's id and its `armed` byte from g_mode and the budget
  // (site_arming.cc).
  void set_site_id(Site& site, uint32_t id) PERFHAT_REQUIRES(mu_);
  // Every registered site's `armed` byte from g_mode and its id (site_arming.cc).
  void rearm_sites() PERFHAT_REQUIRES(mu_);
  void reap_threads() PERFHAT_REQUIRES(mu_);
  void publish_relevant(std::unique_ptr<uint64_t[]> bits);
  // Aggregate mode: folds every thread's CallRecords into histograms_ (each background wake),
  // and moves what histograms_ gathered since the last export into `b` as rows.
  void fold_calls() PERFHAT_REQUIRES(mu_);
  void harvest_histograms(ExportBatch& b, uint64_t now_tick) PERFHAT_REQUIRES(mu_);
  // ExportSource (export_source.cc): the spans waiting in the threads' rings and the interval's
  // aggregate rows; queued spans as a batch's SpanData.
  void collect(SpanQueue* queue, ExportBatch* rows) override PERFHAT_EXCLUDES(mu_);
  void fill(const QueuedSpan* in, SpanData* out, size_t n) override PERFHAT_EXCLUDES(mu_);
  // The interval's aggregate rows: phase 1 since the last export, then the histograms.
  void collect_aggregates(ExportBatch& rows) PERFHAT_REQUIRES(mu_);
  void fill_span(SpanData& s, const QueuedSpan& q) PERFHAT_REQUIRES(mu_);
  // One CallRecord into histograms_ (fold_calls, and spans that find the export queue full).
  void fold_record(ThreadState* ts, const CallRecord& r, double ns_per_tick, const double* bounds)
      PERFHAT_REQUIRES(mu_);
  // A span that found the export queue full becomes records of the aggregates (exact counts).
  void fold_span(const SpanFields& r) PERFHAT_REQUIRES(mu_);
  // Self time of a latency record of `ts`: records come in completion order, so a call's
  // children were folded before it (their ticks wait under its invocation number).
  void fold_self_time(ThreadState& ts, const CallRecord& r, double ns_per_tick,
                      const double* bounds) PERFHAT_REQUIRES(mu_);

  Mutex mu_;
  Config cfg_ PERFHAT_GUARDED_BY(mu_);
  std::string error_ PERFHAT_GUARDED_BY(mu_);
  std::vector<SiteInfo> sites_ PERFHAT_GUARDED_BY(mu_){1};  // id 0 unused
  std::vector<bool> budget_off_ PERFHAT_GUARDED_BY(mu_);    // by site id (set_budget_disarmed)
  std::vector<ThreadState*> threads_ PERFHAT_GUARDED_BY(mu_);
  std::vector<SiteTotals> retired_ PERFHAT_GUARDED_BY(mu_);       // exited threads, folded
  std::vector<SiteTotals> exported_agg_ PERFHAT_GUARDED_BY(mu_);  // totals already exported
  uint64_t last_agg_tick_ PERFHAT_GUARDED_BY(mu_) = 0;
  std::vector<SiteHistograms> histograms_ PERFHAT_GUARDED_BY(mu_);  // by site id
  std::unique_ptr<tigris::Node> filter_ PERFHAT_GUARDED_BY(mu_);
  tigris::Scope scope_ PERFHAT_GUARDED_BY(mu_);
  std::unique_ptr<VariantMask> mask_ PERFHAT_GUARDED_BY(mu_);  // nullptr = every probe on
  tigris::StaticMetrics static_ PERFHAT_GUARDED_BY(mu_);
  tigris::Bindings bindings_ PERFHAT_GUARDED_BY(mu_) = tigris::Bindings::defaults();
  std::vector<std::unique_ptr<uint64_t[]>> relevant_sets_ PERFHAT_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<sampling::RequestSampler>> samplers_ PERFHAT_GUARDED_BY(mu_);
  std::atomic<sampling::RequestSampler*> sampler_{nullptr};
  Resource resource_ PERFHAT_GUARDED_BY(mu_);

  // The export pipeline: queue, flush policy, batches, retries (batch_exporter.h).
  BatchExporter exports_{BatchExporter::Environment{
      [this] { return now_s(); },
      [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); },
      register_exit_flush_after}};

  // Background thread.
  Mutex bg_mu_;
  NativeThread bg_ PERFHAT_GUARDED_BY(bg_mu_);
  BackgroundWake bg_wake_;  // waited on with bg_mu_ held
  bool bg_stop_ PERFHAT_GUARDED_BY(bg_mu_) = false;
  bool bg_final_ PERFHAT_GUARDED_BY(bg_mu_) = false;
  bool bg_final_done_ PERFHAT_GUARDED_BY(bg_mu_) = false;
  // Initialized with probes off and not activated yet.
  bool dormant_ PERFHAT_GUARDED_BY(bg_mu_) = false;
  // The tick from which a thread left on demand starts at the next recorded call; never while
  // the thread runs or starts at activation.
  std::atomic<uint64_t> bg_due_ticks_{~uint64_t{0}};
  // Serializes activate(): held across the clock's calibration (engine.cc).
  std::mutex activation_mu_;
  std::atomic<bool> start_pending_{false};  // activated; finish_activation() not yet run
  std::atomic<double> cycle_s_{120};

  // Clock: unix_ns = unix0 + (tick - tick0) * ns_per_tick. Provisional after activation until
  // the first conversion past the settled baseline (tick_baseline.h).
  std::atomic<double> ns_per_tick_{1.0};
  std::atomic<bool> clock_settled_{true};
  uint64_t tick0_ = 0, unix0_ = 0;
  uint64_t steady0_ = 0;
  // Held by every store of a rate: a settle that read its clocks before a newer or longer
  // estimate was stored must not overwrite it (hooks only try it, settle_clock).
  Mutex clock_mu_;
  uint64_t rate_steady_ PERFHAT_GUARDED_BY(clock_mu_) = 0;  // where the rate's baseline ends

  std::atomic<uint64_t> cycles_{0}, relevant_count_{0}, dropped_ring_retired_{0},
      recorded_retired_{0}, recorded_roots_retired_{0}, hist_dropped_retired_{0}, to_aggregates_{0};
  std::atomic<uint64_t> next_tid_{1};
};

// Config::timing_period of the running configuration (read when a slot's countdown reloads).
extern std::atomic<uint32_t> g_timing_period;
// Config::export_mode == "aggregates" (read when a recorded call begins).
extern std::atomic<bool> g_aggregate_export;
// Config::compensate_overhead (read by the auto-instrumentation hooks at each exit).
extern std::atomic<bool> g_compensate;

// Test seam: replaces the tick source (ticks are then nanoseconds). nullptr restores the TSC.
void set_tick_source(uint64_t (*fn)());

}  // namespace perfhat::detail
