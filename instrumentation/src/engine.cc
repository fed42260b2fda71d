#include "engine.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "budget_controller.h"
#include "budget_runtime.h"
#include "engine_internal.h"
#include "macro_compensation.h"
#include "phase1_window.h"
#include "selection_store.h"

// Provided by perfhat_otlp when linked (it forces the symbol in with --undefined); the core stays
// free of any HTTP dependency.
extern "C" __attribute__((weak)) perfhat::Exporter* perfhat_otlp_create(const perfhat::Config& cfg,
                                                                        std::string* error);

namespace perfhat {
namespace detail {

std::atomic<int> g_mode{kUninitialized};
std::atomic<uint64_t (*)()> g_tick_source{nullptr};
std::atomic<const uint64_t*> g_relevant{nullptr};
std::atomic<uint64_t> g_rate_threshold{~uint64_t{0}};
std::atomic<uint32_t> g_timing_period{16};
std::atomic<bool> g_aggregate_export{false};
std::atomic<bool> g_compensate{true};
constinit thread_local Hot* t_hot __attribute__((tls_model("initial-exec"))) = nullptr;

// Declared in engine_internal.h (what it means is said there).
constinit thread_local bool t_in_engine = false;

// The flush at exit. std::exit runs atexit handlers and static destructors in the reverse order
// of their registration, so a handler registered when the first probe initialized the library
// runs after the destructors of every static constructed later -- among them the HTTP
// client's function-local statics, constructed by the first export (httplib's response-line
// regex: using it destroyed threw std::bad_alloc from the exit-time flush, issue #18). So the
// handler is registered again after the exporter has run each of its paths once (each result
// for each kind of content: register_exit_flush_after, at most 12 registrations), and only
// the first call does the work. It never throws: an exception escaping an exit handler terminates
// the process.
// A forked child has the parent's memory but only the forking thread: the background exporter
// is gone, and a lock another thread held at fork() stays held forever. The child neither
// records nor exports (its calls would be counted by nobody's exporter); it must not touch
// those locks or that thread, at exit least of all.
std::atomic<bool> g_forked_child{false};

namespace {

// Engine::request_background_on_demand: taken by the next activation.
std::atomic<bool> g_background_on_demand{false};

void on_fork_child() noexcept {
  g_forked_child.store(true);
  g_mode.store(kDisabled);
  t_hot = nullptr;  // the sites stay armed: each one's next call disarms it (Engine::park)
}

void exit_flush() noexcept {
  if (g_forked_child.load()) return;
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return;
  try {
    EngineScope in_engine;
    if (auto* phase1_exit = g_phase1_exit.load()) phase1_exit();  // XRay's carried selection
    Engine::get().shutdown();
  } catch (...) {
    std::fputs("perfhat: the exit-time flush failed; pending data is lost\n", stderr);
  }
}

}  // namespace

void register_exit_flush_after(ExportResult r, const ExportBatch& b) {
  static std::atomic<unsigned> seen{0};
  const unsigned content = (b.spans.empty() ? 0u : 1u) | (b.histograms.empty() ? 0u : 2u);
  const unsigned bit = 1u << (static_cast<unsigned>(r) * 4 + content);
  if ((seen.fetch_or(bit) & bit) == 0) std::atexit(&exit_flush);
}

Engine& Engine::get() {
  static Engine* e = new Engine();  // never destroyed: probes may run during static destruction
  return *e;
}

bool Engine::init(const Config& cfg, std::shared_ptr<Exporter> exporter) {
  shutdown();
  std::string err;
  std::unique_ptr<tigris::Node> filter;
  if (!cfg.filter.empty()) {
    auto r = tigris::parse(cfg.filter);
    if (!r) {
      err = "PERFHAT_FILTER: " + r.error->to_string();
    } else {
      filter = std::move(r.root);
    }
  }
  tigris::StaticMetrics sm;
  if (err.empty() && !cfg.static_metrics_file.empty()) {
    std::ifstream in(cfg.static_metrics_file, std::ios::binary);
    if (!in) {
      err = "PERFHAT_STATIC_METRICS: cannot read " + cfg.static_metrics_file;
    } else {
      std::stringstream ss;
      ss << in.rdbuf();
      sm = tigris::parse_static_metrics_csv(ss.str());
      if (!sm.error.empty()) err = "PERFHAT_STATIC_METRICS: " + sm.error;
    }
  }
  auto sampler = sampling::make_sampler(cfg.sampler, cfg.sampling_rate, 0);
  if (err.empty() && !sampler) {
    err = "PERFHAT_SAMPLER: unknown sampler '" + cfg.sampler +
          "' (adaptive, uniform, inverse, full, none)";
  }
  if (err.empty() && cfg.export_mode != "spans" && cfg.export_mode != "aggregates") {
    err = "PERFHAT_EXPORT: unknown export mode '" + cfg.export_mode + "' (spans, aggregates)";
  }
  std::unique_ptr<VariantMask> mask;
  if (err.empty()) err = load_variant_mask(cfg, mask);
  if (err.empty() && !exporter && !cfg.endpoint.empty()) {
    if (perfhat_otlp_create == nullptr) {
      err = "an endpoint is configured but perfhat::otlp is not linked; spans are not exported";
    } else {
      std::string e;
      Exporter* x = perfhat_otlp_create(cfg, &e);
      if (x == nullptr) err = "OTLP exporter: " + e;
      exporter.reset(x);
    }
  }
  if (!err.empty()) {
    std::fprintf(stderr, "perfhat: %s; probes disabled\n", err.c_str());
    Lock l(mu_);
    error_ = err;
    g_mode.store(kDisabled);
    rearm_sites();
    return false;
  }
  // A relevant set carried from the program's last process (XRay mode) stays when the selection's
  // configuration does not change: a program's own init() from the environment keeps it.
  bool keep_carried = false;
  {
    Lock l(mu_);
    keep_carried = g_phase1_carried.load() && !cfg.filter.empty() &&
                   selection_config_hash(cfg.filter, cfg.scope, cfg.variant_manifest, cfg.variant,
                                         cfg.replica) ==
                       selection_config_hash(cfg_.filter, cfg_.scope, cfg_.variant_manifest,
                                             cfg_.variant, cfg_.replica);
    error_.clear();
    cfg_ = cfg;
    filter_ = std::move(filter);
    scope_ = tigris::Scope::parse(cfg.scope);
    mask_ = std::move(mask);
    static_ = std::move(sm);
    resource_.service_name = cfg.service_name;
    resource_.service_version = cfg.service_version;
    char host[256] = {};
    if (::gethostname(host, sizeof(host) - 1) == 0) resource_.host_name = host;
    set_variant_resource(mask_.get(), resource_);
    last_agg_tick_ = now_ticks();
    // Sites registered under an earlier configuration are re-checked against the new scope.
    for (size_t id = 1; id < sites_.size(); ++id) {
      bool admit = (scope_.admits(sites_[id].function) || scope_.admits(sites_[id].name)) &&
                   in_variant(mask_.get(), sites_[id]);
      set_site_id(*sites_[id].site, admit ? static_cast<uint32_t>(id) : kExcludedSite);
    }
    sampler_.store(sampler.get());
    samplers_.push_back(std::move(sampler));
  }
  update_threshold(sampler_.load()->rate());
  g_aggregate_export.store(cfg.export_mode == "aggregates", std::memory_order_relaxed);
  g_compensate.store(cfg.compensate_overhead, std::memory_order_relaxed);
  g_timing_period.store(std::max<uint32_t>(cfg.timing_period, 1), std::memory_order_relaxed);
  g_phase1_window_calls.store(cfg.phase1_window_calls, std::memory_order_relaxed);
  g_phase1_window_ns.store(uint64_t{cfg.phase1_window_ms} * 1000000, std::memory_order_relaxed);
  g_phase1_function_calls.store(cfg.phase1_function_calls, std::memory_order_relaxed);
  g_phase1_duty.store(cfg.phase1_duty > 0 && cfg.phase1_duty <= 1 ? cfg.phase1_duty : 1,
                      std::memory_order_relaxed);
  cycle_s_.store(cfg.cycle_s > 0 ? cfg.cycle_s : 120);
  if (!cfg.filter.empty() && !keep_carried) {
    g_phase1_carried.store(false);
    auto empty = std::make_unique<uint64_t[]>(1);  // nothing relevant before the first cycle
    empty[0] = 0;
    publish_relevant(std::move(empty));
    relevant_count_.store(0);  // counters() must not report the previous configuration's set
  } else if (cfg.filter.empty()) {
    g_phase1_carried.store(false);
    g_relevant.store(nullptr, std::memory_order_release);
  }
  exports_.configure(std::move(exporter), ExportPolicy::from(cfg));
  // Registered whether or not probes start on: a child forked while they are off must not turn
  // them on later with the parent's state.
  static bool atfork_registered = pthread_atfork(nullptr, nullptr, &on_fork_child) == 0;
  (void)atfork_registered;
  {
    Lock l(bg_mu_);
    bg_stop_ = false;
    bg_final_ = bg_final_done_ = false;
    dormant_ = true;
  }
  // Probes off: nothing else until they are turned on (engine_activation.cc).
  if (cfg.enabled) activate();
  set_mode(cfg.enabled ? kEnabled : kDisabled);
  return true;
}

// What only running probes need. A process started with probes off pays none of it.
void Engine::activate() {
  // A second caller waits for the first to finish: probes must not run on a half-written clock.
  std::lock_guard<std::mutex> once(activation_mu_);
  {
    Lock l(bg_mu_);
    if (!dormant_) return;
  }
  calibrate_clock(true);
  double first_work_s = kBackgroundTickS;  // when a thread left on demand is due
  {
    Lock l(mu_);
    last_agg_tick_ = now_ticks();
    first_work_s = std::min(first_work_s, cfg_.export_interval_s);
  }
  const bool on_demand = g_background_on_demand.exchange(false);
  {
    // Under bg_mu_: a shutdown on another thread meanwhile reads bg_ to join it.
    Lock l(bg_mu_);
    dormant_ = false;
    if (!bg_stop_ && on_demand) {
      bg_due_ticks_.store(now_ticks() +
                          static_cast<uint64_t>(first_work_s * 1e9 / ns_per_tick_.load()));
    } else if (!bg_stop_) {
      bg_.start(&Engine::background_main, this);
    }
  }
  start_pending_.store(true);  // finish_activation(), once no lock is held
  // No budget asked for (nor a refused one to report): the controller is not made, or, made by
  // an earlier activation, is configured off.
  const budget::Settings budget = budget::Settings::from_env();
  if (budget.enabled || !budget.error.empty() || budget::Controller::if_created() != nullptr) {
    budget::Controller& c = budget::Controller::get();
    if (Status s = c.configure(budget); !s)
      std::fprintf(stderr, "perfhat: %s; collection budget off\n", s.error.c_str());
    // The collection budget measures and plans at every tick from the start.
    if (c.enabled()) start_background();
  }
}

// Outside every lock and the initialization's once: the exporter's start() may dlopen(), which
// takes the dynamic loader's lock; a library's constructor running under that lock on another
// thread may reach its first probe and wait for initialization to finish. Before the exit flush
// is registered: handlers the exporter's libraries register (OpenSSL's clean-up) then run after
// the flush, not before it.
void Engine::finish_activation() {
  if (!start_pending_.exchange(false)) return;
  if (std::shared_ptr<Exporter> x = exports_.exporter()) x->start();
  static bool atexit_registered = std::atexit(&exit_flush) == 0;
  (void)atexit_registered;
}

void Engine::request_background_on_demand(bool on) { g_background_on_demand.store(on); }

void Engine::start_background() {
  Lock l(bg_mu_);
  bg_due_ticks_.store(~uint64_t{0}, std::memory_order_relaxed);
  if (bg_stop_ || dormant_ || bg_.joinable() || g_mode.load() == kUninitialized ||
      g_forked_child.load()) {
    return;
  }
  bg_.start(&Engine::background_main, this);
}

bool Engine::stop_background(bool final) {
  NativeThread bg;  // joined outside bg_mu_, which the background thread takes to finish
  {
    Lock l(bg_mu_);
    bg_stop_ = true;
    bg_final_ = final;
    dormant_ = false;  // after shutdown, turning probes on starts nothing
    bg_final_done_ = false;
    if (bg_.joinable() && !bg_.is_current()) bg = std::move(bg_);
  }
  bg_wake_.notify_all();
  if (!bg.joinable()) return false;
  bg.join();
  Lock l(bg_mu_);
  return bg_final_done_;
}

void Engine::shutdown() {
  if (g_forked_child.load()) return;  // on_fork_child: nothing of the parent's to flush here
  int prev = g_mode.exchange(kDisabled);
  {
    Lock l(mu_);
    rearm_sites();
  }
  const bool exported = stop_background(prev != kUninitialized);
  budget::Controller::stop_any();
  if (prev == kUninitialized) return;
  if (!exported) exports_.export_pending(*this, true);
  exports_.shutdown_exporter();
}

// The thread sleeps until its next once-a-second tick, analysis or export (at least 50 ms). A
// thread whose call ring (aggregate export) gets half full wakes it early (aggregate_call).
// It used to wake every 50 ms: on the sample service those 20 wakes a second were about a third
// of phase 1's cost and a tenth of full-agg's (bench/README.md).
std::chrono::milliseconds Engine::background_wait(double last_tick, double last_analysis) {
  const double next = std::min(
      {last_tick + kBackgroundTickS, last_analysis + cycle_s_.load(), exports_.next_due_s()});
  const double ms = std::clamp((next - now_s()) * 1000.0, 50.0, 1000.0);
  return std::chrono::milliseconds(static_cast<int64_t>(ms));
}

void* Engine::background_main(void* engine) {
  static_cast<Engine*>(engine)->run_background();
  return nullptr;
}

void Engine::run_background() {
  // Named so per-thread CPU (/proc/PID/task/*/comm, top -H) separates export from app work.
  pthread_setname_np(pthread_self(), "perfhat-bg");
  t_in_engine = true;
  double last_tick = now_s(), last_analysis = last_tick;
  bool macro_costs_measured = false;  // at the first tick: probes are enabled by then
  MutexLock l(bg_mu_);
  while (!bg_stop_) {
    bg_wake_.wait(l, background_wait(last_tick, last_analysis));
    if (bg_stop_) break;
    l.unlock();
    double now = now_s();
    if (now - last_tick >= kBackgroundTickS) {
      auto* s = sampler_.load();
      s->tick(now);
      update_threshold(s->rate());
      if (!macro_costs_measured) macro_costs_measured = calibrate_macro_compensation();
      if (auto* budget = budget::Controller::if_created()) budget->background_tick();
      publish_budget();
      calibrate_clock(false);
      if (auto* phase1_tick = g_phase1_tick.load()) phase1_tick();  // XRay's counting windows
      last_tick = now;
    }
    if (now - last_analysis >= cycle_s_.load() && !g_phase1_carried.load()) {
      analyze();
      last_analysis = now;
    }
    if (!exports_.export_if_due(*this)) {
      Lock g(mu_);
      fold_calls();  // keeps the rings short between exports
    }
    l.lock();
  }
  if (bg_final_) {
    l.unlock();
    exports_.export_pending(*this, true);
    l.lock();
    bg_final_done_ = true;
  }
}

Counters Engine::counters() {
  Counters c;
  Lock l(mu_);
  c.spans_recorded = recorded_retired_.load();
  c.spans_dropped_ring = dropped_ring_retired_.load();
  c.spans_to_aggregates = to_aggregates_.load();
  c.records_dropped_histogram = hist_dropped_retired_.load();
  for (ThreadState* ts : threads_) {
    c.spans_recorded += ts->recorded.load(std::memory_order_relaxed);
    c.spans_dropped_ring += ts->dropped.load(std::memory_order_relaxed);
    c.spans_to_aggregates += ts->to_aggregates.load(std::memory_order_relaxed);
    c.records_dropped_histogram += ts->calls_dropped.load(std::memory_order_relaxed);
  }
  exports_.add_counters(c);
  c.analysis_cycles = cycles_.load();
  c.relevant_functions = relevant_count_.load();
  return c;
}

std::string Engine::last_error() {
  Lock l(mu_);
  return error_;
}

}  // namespace detail
}  // namespace perfhat
