#include "engine.h"

#include <cxxabi.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <random>
#include <sstream>
#include <unordered_map>

#include "budget_controller.h"
#include "budget_runtime.h"
#include "symbolize.h"

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

namespace {

constexpr uint32_t kMaxSites = 1u << 16;  // slot array reserved per thread (virtual memory)
// CallRecords per thread. A thread wakes the background thread when half of its ring is
// waiting (aggregate_call), so the other half absorbs the time it takes to wake and drain. The
// ring is rewritten in a cycle, so its size decides where the lines an application thread writes
// come from: 1 MB per thread stays in the last-level cache of a service with a dozen or two
// threads, 2 MB per thread (the first size) did not. libperfhat's share of the sample service's
// CPU (perf, every call recorded, 3 runs each) was 8.7-8.9 % with 2 MB, 7.3-7.4 % with 1 MB,
// 6.6-8.1 % with 512 KB (bench/README.md, "Aggregate export"); 1 MB keeps twice the headroom for
// hot loops. A full ring drops records and counts them.
constexpr uint64_t kCallRing = uint64_t{1} << 15;
thread_local bool t_exiting = false;

// Set while this thread runs the library's own code (the background thread always). A probe
// that fires there is ignored: with -finstrument-functions, inline functions the engine calls
// (a std::vector's, an exporter.hpp constructor) may be the instrumented copies of the user's
// translation units, and recording them would re-enter the engine under its own lock (the
// ASan/Debug build of the auto-instrumentation test deadlocked so, issue #19).
thread_local bool t_in_engine = false;
struct EngineScope {
  bool prev = t_in_engine;
  EngineScope() { t_in_engine = true; }
  ~EngineScope() { t_in_engine = prev; }
  EngineScope(const EngineScope&) = delete;
  EngineScope& operator=(const EngineScope&) = delete;
};

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
void on_fork_child() noexcept {
  g_forked_child.store(true);
  g_mode.store(kDisabled);
}

void exit_flush() noexcept {
  if (g_forked_child.load()) return;
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return;
  try {
    EngineScope in_engine;
    Engine::get().shutdown();
  } catch (...) {
    std::fputs("perfhat: the exit-time flush failed; pending data is lost\n", stderr);
  }
}
void register_exit_flush_after(ExportResult r, const ExportBatch& b) {
  static std::atomic<unsigned> seen{0};
  const unsigned content = (b.spans.empty() ? 0u : 1u) | (b.histograms.empty() ? 0u : 2u);
  const unsigned bit = 1u << (static_cast<unsigned>(r) * 4 + content);
  if ((seen.fetch_or(bit) & bit) == 0) std::atexit(&exit_flush);
}

// Itanium C++ ABI 2.2.2: the per-thread exception globals behind std::uncaught_exceptions().
struct EhGlobals {
  void* caught_exceptions;
  unsigned int uncaught_exceptions;
};

// Checks once, inside a destructor run by unwinding, that the field above is the runtime's
// counter; otherwise the probes fall back to calling std::uncaught_exceptions().
bool eh_layout_ok() {
  static const bool ok = [] {
    bool seen = false;
    struct Check {
      bool* seen;
      ~Check() {
        auto* g = reinterpret_cast<EhGlobals*>(abi::__cxa_get_globals());
        *seen = g != nullptr && std::uncaught_exceptions() == 1 && g->uncaught_exceptions == 1;
      }
    };
    try {
      Check c{&seen};
      throw 1;
    } catch (int) {
    }
    auto* g = reinterpret_cast<EhGlobals*>(abi::__cxa_get_globals());
    return seen && g->uncaught_exceptions == 0;
  }();
  return ok;
}
const unsigned kAlwaysCheck = 1;

// The symbol of the function containing `addr`. The probe's registration call sits in a cold
// block that GCC may move to a "<name>.cold" fragment; clone suffixes (.cold, .part.N, .isra.N,
// .constprop.N) never occur in an Itanium mangled name, so the name up to the first '.' is the
// user's function.
std::string function_symbol(const void* addr) {
  std::string m = symbolize::resolve(addr).mangled;
  if (m.rfind("_Z", 0) == 0) m = m.substr(0, m.find('.'));
  return m;
}

// A site's mangled symbol, looked up when it is first exported (off the probes' path).
void resolve(SiteInfo& si) {
  if (si.resolved) return;
  if (si.addr) si.mangled = function_symbol(si.addr);
  si.resolved = true;
}

uint64_t steady_now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}
uint64_t unix_now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

bool tsc_is_invariant() {
#if defined(__x86_64__) || defined(__i386__)
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0) {
      return line.find(" constant_tsc") != std::string::npos &&
             line.find(" nonstop_tsc") != std::string::npos;
    }
  }
#endif
  return false;
}

uint64_t steady_ticks() { return steady_now_ns(); }

uint64_t splitmix(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

thread_local uint64_t t_seed = 0;
uint64_t random64() {
  if (t_seed == 0) {
    t_seed = std::random_device{}() ^ (steady_now_ns() << 1) ^ reinterpret_cast<uintptr_t>(&t_seed);
  }
  return splitmix(t_seed);
}

// Destroys the thread's state registration at thread exit.
struct ThreadGuard {
  ThreadState* ts = nullptr;
  ~ThreadGuard() {
    t_exiting = true;
    t_hot = nullptr;
    if (ts) Engine::get().thread_exit(ts);
  }
};
thread_local ThreadGuard t_guard;

double parse_double_env(const char* name, double def) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return def;
  char* end = nullptr;
  double d = std::strtod(v, &end);
  if (end == v || *end != '\0' || !std::isfinite(d)) {
    std::fprintf(stderr, "perfhat: ignoring %s=%s (not a number)\n", name, v);
    return def;
  }
  return d;
}

std::string env_or(const char* name, const std::string& def) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : def;
}

}  // namespace

uint64_t steady_ns() noexcept { return steady_now_ns(); }

void SiteTotals::add(const Slot& s) {
  uint64_t c = s.count.load(std::memory_order_relaxed);
  if (c == 0) return;
  count += c;
  uint64_t t = s.timed.load(std::memory_order_relaxed);
  timed += t;
  if (t > 0) window_calls += s.last_index.load(std::memory_order_relaxed) + 1;
  sum_ticks += s.sum_ticks.load(std::memory_order_relaxed);
  errors += s.errors.load(std::memory_order_relaxed);
  first = std::min(first, s.first_tick.load(std::memory_order_relaxed));
  last = std::max(last, s.last_tick.load(std::memory_order_relaxed));
  size_n += s.size_n.load(std::memory_order_relaxed);
  size_sum += s.size_sum.load(std::memory_order_relaxed);
  size_sq += s.size_sq.load(std::memory_order_relaxed);
  sessions |= s.sessions.load(std::memory_order_relaxed);
  overflow_n += s.overflow_n.load(std::memory_order_relaxed);
  overflow_ticks += s.overflow_ticks.load(std::memory_order_relaxed);
  overflow_errors += s.overflow_errors.load(std::memory_order_relaxed);
}

void SiteTotals::add(const SiteTotals& o) {
  if (o.count == 0) return;
  count += o.count;
  timed += o.timed;
  window_calls += o.window_calls;
  sum_ticks += o.sum_ticks;
  errors += o.errors;
  first = std::min(first, o.first);
  last = std::max(last, o.last);
  size_n += o.size_n;
  size_sum += o.size_sum;
  size_sq += o.size_sq;
  sessions |= o.sessions;
  overflow_n += o.overflow_n;
  overflow_ticks += o.overflow_ticks;
  overflow_errors += o.overflow_errors;
}

Engine& Engine::get() {
  static Engine* e = new Engine();  // never destroyed: probes may run during static destruction
  return *e;
}

void set_tick_source(uint64_t (*fn)()) { g_tick_source.store(fn, std::memory_order_relaxed); }

void Engine::calibrate_clock(bool initial) {
  auto src = g_tick_source.load(std::memory_order_relaxed);
  if (src != nullptr && src != &steady_ticks) {
    ns_per_tick_.store(1.0);  // injected clocks tick in nanoseconds
    if (initial) {
      tick0_ = now_ticks();
      unix0_ = unix_now_ns();
    }
    return;
  }
  if (initial) {
    if (!tsc_is_invariant()) g_tick_source.store(&steady_ticks);
    tick0_ = now_ticks();
    steady0_ = steady_now_ns();
    unix0_ = unix_now_ns();
    if (g_tick_source.load() == &steady_ticks) {
      ns_per_tick_.store(1.0);
      return;
    }
    // A short first estimate; the background thread refines it over longer baselines.
    uint64_t s1;
    do {
      s1 = steady_now_ns();
    } while (s1 - steady0_ < 2'000'000);
    ns_per_tick_.store(static_cast<double>(s1 - steady0_) /
                       static_cast<double>(now_ticks() - tick0_));
    return;
  }
  if (g_tick_source.load() == &steady_ticks) return;
  uint64_t t = now_ticks(), s = steady_now_ns();
  if (t > tick0_ && s > steady0_ + 100'000'000) {
    ns_per_tick_.store(static_cast<double>(s - steady0_) / static_cast<double>(t - tick0_));
  }
}

double Engine::now_s() {
  return static_cast<double>(now_ticks() - tick0_) * ns_per_tick_.load() / 1e9;
}

uint64_t Engine::to_unix_ns(uint64_t tick) {
  double d = (static_cast<double>(tick) - static_cast<double>(tick0_)) * ns_per_tick_.load();
  return unix0_ + static_cast<uint64_t>(std::max(-static_cast<double>(unix0_), d));
}

void Engine::update_threshold(double rate) {
  rate = std::clamp(rate, 0.0, 1.0);
  uint64_t thr = rate >= 1.0 ? ~uint64_t{0} : static_cast<uint64_t>(std::ldexp(rate, 64));
  g_rate_threshold.store(thr, std::memory_order_relaxed);
}

void Engine::publish_relevant(std::unique_ptr<uint64_t[]> bits) {
  const uint64_t* p = bits.get();
  {
    Lock l(mu_);
    relevant_sets_.push_back(std::move(bits));  // old sets stay valid: readers never block
  }
  g_relevant.store(p, std::memory_order_release);
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
    return false;
  }
  calibrate_clock(true);
  {
    Lock l(mu_);
    error_.clear();
    cfg_ = cfg;
    filter_ = std::move(filter);
    scope_ = tigris::Scope::parse(cfg.scope);
    static_ = std::move(sm);
    exporter_ = std::move(exporter);
    resource_.service_name = cfg.service_name;
    resource_.service_version = cfg.service_version;
    char host[256] = {};
    if (::gethostname(host, sizeof(host) - 1) == 0) resource_.host_name = host;
    last_agg_tick_ = now_ticks();
    // Sites registered under an earlier configuration are re-checked against the new scope.
    for (size_t id = 1; id < sites_.size(); ++id) {
      bool admit = scope_.admits(sites_[id].function) || scope_.admits(sites_[id].name);
      sites_[id].site->id.store(admit ? static_cast<uint32_t>(id) : kExcludedSite);
    }
    sampler_.store(sampler.get());
    samplers_.push_back(std::move(sampler));
  }
  update_threshold(sampler_.load()->rate());
  g_aggregate_export.store(cfg.export_mode == "aggregates", std::memory_order_relaxed);
  g_compensate.store(cfg.compensate_overhead, std::memory_order_relaxed);
  g_timing_period.store(std::max<uint32_t>(cfg.timing_period, 1), std::memory_order_relaxed);
  cycle_s_.store(cfg.cycle_s > 0 ? cfg.cycle_s : 120);
  if (!cfg.filter.empty()) {
    auto empty = std::make_unique<uint64_t[]>(1);  // nothing relevant before the first cycle
    empty[0] = 0;
    publish_relevant(std::move(empty));
  } else {
    g_relevant.store(nullptr, std::memory_order_release);
  }
  span_pressure_.store(false);
  {
    std::lock_guard<std::mutex> l(bg_mu_);
    bg_stop_ = false;
    bg_final_ = bg_final_done_ = false;
  }
  bg_ = std::thread([this] { run_background(); });
  static bool atexit_registered = std::atexit(&exit_flush) == 0;
  (void)atexit_registered;
  static bool atfork_registered = pthread_atfork(nullptr, nullptr, &on_fork_child) == 0;
  (void)atfork_registered;
  if (std::string berr; !budget::Controller::get().configure(budget::Settings::from_env(), &berr))
    std::fprintf(stderr, "perfhat: %s; collection budget off\n", berr.c_str());
  g_mode.store(cfg.enabled ? kEnabled : kDisabled);
  return true;
}

bool Engine::stop_background(bool final) {
  {
    std::lock_guard<std::mutex> l(bg_mu_);
    bg_stop_ = true;
    bg_final_ = final;
    bg_final_done_ = false;
  }
  bg_cv_.notify_all();
  if (!bg_.joinable() || bg_.get_id() == std::this_thread::get_id()) return false;
  bg_.join();
  std::lock_guard<std::mutex> l(bg_mu_);
  return bg_final_done_;
}

void Engine::shutdown() {
  if (g_forked_child.load()) return;  // on_fork_child: nothing of the parent's to flush here
  int prev = g_mode.exchange(kDisabled);
  const bool exported = stop_background(prev != kUninitialized);
  budget::Controller::get().stop();
  if (prev == kUninitialized) return;
  if (!exported) export_pending(true);
  std::shared_ptr<Exporter> ex;
  {
    Lock l(mu_);
    ex = exporter_;
  }
  if (ex) ex->shutdown();
}

// The thread sleeps until its next once-a-second tick, analysis or export (at least 50 ms). A
// thread whose call ring (aggregate export) gets half full wakes it early (aggregate_call).
// It used to wake every 50 ms: on the sample service those 20 wakes a second were about a third
// of phase 1's cost and a tenth of full-agg's (bench/README.md).
std::chrono::milliseconds Engine::background_wait(double last_tick, double last_analysis,
                                                  double last_export, double export_interval) {
  const double next =
      std::min({last_tick + 1.0, last_analysis + cycle_s_.load(), last_export + export_interval});
  const double ms = std::clamp((next - now_s()) * 1000.0, 50.0, 1000.0);
  return std::chrono::milliseconds(static_cast<int64_t>(ms));
}

void Engine::run_background() {
  // Named so per-thread CPU (/proc/PID/task/*/comm, top -H) separates export from app work.
  pthread_setname_np(pthread_self(), "perfhat-bg");
  t_in_engine = true;
  double last_tick = now_s(), last_analysis = last_tick, last_export = last_tick;
  double export_interval;
  {
    Lock g(mu_);
    export_interval = cfg_.export_interval_s;
  }
  std::unique_lock<std::mutex> l(bg_mu_);
  while (!bg_stop_) {
    bg_cv_.wait_for(l, background_wait(last_tick, last_analysis, last_export, export_interval));
    if (bg_stop_) break;
    l.unlock();
    double now = now_s();
    {
      Lock g(mu_);
      export_interval = cfg_.export_interval_s;
    }
    if (now - last_tick >= 1.0) {
      auto* s = sampler_.load();
      s->tick(now);
      update_threshold(s->rate());
      budget::Controller::get().tick();
      calibrate_clock(false);
      last_tick = now;
    }
    if (now - last_analysis >= cycle_s_.load()) {
      analyze();
      last_analysis = now;
    }
    if (span_pressure_.exchange(false) || now - last_export >= export_interval) {
      export_pending(false);
      last_export = now;
    } else {
      Lock g(mu_);
      fold_calls();  // keeps the rings short between exports
    }
    l.lock();
  }
  if (bg_final_) {
    l.unlock();
    export_pending(true);
    l.lock();
    bg_final_done_ = true;
  }
}

Hot* Engine::prepare(Site& site, const void* ret_addr) {
  if (t_exiting) return nullptr;
  Hot* h = t_hot;
  Lock l(mu_);
  uint32_t id = site.id.load(std::memory_order_relaxed);
  if (id == 0) {
    if (sites_.size() >= kMaxSites) {
      site.id.store(kExcludedSite);
      return nullptr;
    }
    SiteInfo info;
    info.site = &site;
    info.function = site.function ? site.function : "";
    info.name = site.name ? site.name : info.function;
    info.file = site.file ? site.file : "";
    info.line = site.line;
    info.kind = site.kind;
    info.addr = site.address ? site.address : ret_addr;
    if (site.mangled) {
      info.mangled = site.mangled;
      info.resolved = true;
    }
    bool admit = scope_.admits(info.function) || scope_.admits(info.name);
    id = static_cast<uint32_t>(sites_.size());
    sites_.push_back(std::move(info));
    site.id.store(admit ? id : kExcludedSite, std::memory_order_relaxed);
    if (!admit) return nullptr;
  }
  if (id == kExcludedSite) return nullptr;
  if (h == nullptr) {
    auto* ts = new ThreadState();
    ts->tid = next_tid_.fetch_add(1);
    ts->slots_bytes = sizeof(Slot) * kMaxSites;
    void* mem = ::mmap(nullptr, ts->slots_bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) {
      delete ts;
      return nullptr;
    }
    // Zero-filled anonymous pages are valid all-zero Slots (atomics of integers/doubles).
    ts->hot.slots = static_cast<Slot*>(mem);
    ts->hot.capacity = kMaxSites;
    ts->hot.owner = ts;
    ts->hot.rng = random64() | 1;
    ts->hot.eh_uncaught =
        eh_layout_ok()
            ? &reinterpret_cast<EhGlobals*>(abi::__cxa_get_globals())->uncaught_exceptions
            : &kAlwaysCheck;
    // Aggregate mode's ring: 2 MB of address space, pages committed only once written.
    void* calls = ::mmap(nullptr, sizeof(CallRecord) * kCallRing, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (calls != MAP_FAILED) {
      ts->calls = static_cast<CallRecord*>(calls);
      ts->calls_mask = kCallRing - 1;
    }
    uint32_t ring = std::bit_ceil(std::max<uint32_t>(cfg_.span_ring_per_thread, 16));
    ts->ring.reset(new SpanRecord[ring]);
    ts->ring_mask = ring - 1;
    threads_.push_back(ts);
    t_guard.ts = ts;
    t_hot = h = &ts->hot;
  }
  return h;
}

void Engine::thread_exit(ThreadState* ts) { ts->alive.store(false, std::memory_order_release); }

void Engine::reap_threads() {
  // Dead threads with drained rings are folded into retired_ and freed.
  for (auto it = threads_.begin(); it != threads_.end();) {
    ThreadState* ts = *it;
    if (ts->alive.load(std::memory_order_acquire) ||
        ts->head.load(std::memory_order_acquire) != ts->tail.load(std::memory_order_relaxed) ||
        ts->calls_head.load(std::memory_order_acquire) !=
            ts->calls_tail.load(std::memory_order_relaxed)) {
      ++it;
      continue;
    }
    if (retired_.size() < sites_.size()) retired_.resize(sites_.size());
    for (size_t id = 1; id < sites_.size(); ++id) retired_[id].add(ts->hot.slots[id]);
    dropped_ring_retired_ += ts->dropped.load();
    recorded_retired_ += ts->recorded.load();
    to_aggregates_ += ts->to_aggregates.load();
    hist_dropped_retired_ += ts->calls_dropped.load();
    if (ts->calls != nullptr) ::munmap(ts->calls, sizeof(CallRecord) * kCallRing);
    ::munmap(ts->hot.slots, ts->slots_bytes);
    delete ts;
    it = threads_.erase(it);
  }
}

std::vector<SiteTotals> Engine::totals() {
  std::vector<SiteTotals> t(sites_.size());
  for (size_t id = 1; id < sites_.size(); ++id) {
    if (id < retired_.size()) t[id].add(retired_[id]);
    for (ThreadState* ts : threads_) t[id].add(ts->hot.slots[id]);
  }
  return t;
}

void Engine::begin_request(Hot* h, const Site& site) {
  ThreadState* ts = h->owner;
  if (ts->request_depth++ > 0) return;  // nested roots belong to the outer request
  double u = static_cast<double>(random64() >> 11) * 0x1.0p-53;
  auto d = sampler_.load()->decide(site.name ? site.name : site.function, u, now_s());
  h->in_request = true;
  h->request_sampled = d.sampled;
  h->request_weight = d.sampled ? d.weight : 0;
  ts->trace_hi = random64();
  ts->trace_lo = random64() | 1;
  ts->current_span = 0;
}

void Engine::end_request(Hot* h, const Site& site, uint64_t start, uint64_t end) {
  ThreadState* ts = h->owner;
  if (--ts->request_depth > 0) return;
  double rt = static_cast<double>(end - start) * ns_per_tick_.load();
  sampler_.load()->on_response(site.name ? site.name : site.function, rt, h->request_sampled,
                               now_s());
  h->in_request = false;
  h->request_sampled = false;
  ts->trace_hi = ts->trace_lo = 0;
}

// Sampling weight of a recorded call: 1 / the probability it was recorded with.
static double call_weight(const Hot* h, uint32_t site) {
  if (h->in_request) return h->request_weight * budget::weight(site);
  uint64_t thr = g_rate_threshold.load(std::memory_order_relaxed);
  return (thr == ~uint64_t{0} ? 1.0 : std::ldexp(1.0, 64) / static_cast<double>(thr)) *
         budget::weight(site);
}

void Engine::aggregate_call(Hot* h, uint32_t site, uint64_t start, uint64_t end, const Probe& p,
                            uint64_t parent, bool own_call) {
  ThreadState* ts = h->owner;
  const auto caller = static_cast<uint32_t>(parent >> 48);
  const uint64_t caller_call = parent & kInvocationMask;
  // Before the caller is restored, the innermost invocation is this call's own.
  const uint64_t packed_caller =
      own_call ? pack_caller_call(caller_call, ts->agg_invocation) : caller_call;
  ts->agg_site = caller;
  ts->agg_invocation = caller_call;
  const auto w = static_cast<float>(call_weight(h, site));
  uint64_t head = ts->calls_head.load(std::memory_order_relaxed);
  const uint64_t first_head = head;
  uint64_t dropped = 0;
  auto push = [&](const CallRecord& r) {
    if (head - ts->calls_tail_seen > ts->calls_mask) {
      ts->calls_tail_seen = ts->calls_tail.load(std::memory_order_acquire);
      if (head - ts->calls_tail_seen > ts->calls_mask || ts->calls == nullptr) {
        ++dropped;
        return;
      }
    }
    ts->calls[head & ts->calls_mask] = r;
    ++head;
  };
  push({end - start, packed_caller, site, caller, w, CellKind::kLatency, p.error()});
  if (dropped != 0) {
    // The call itself is never lost: its weight and duration go to the slot's exact overflow
    // sums (exported as the site's row; no caller, no quantile detail), only its size and loop
    // values may be.
    dropped = 0;
    Slot& s = h->slots[site];
    const double wd = w;
    s.overflow_n.store(s.overflow_n.load(std::memory_order_relaxed) + wd,
                       std::memory_order_relaxed);
    s.overflow_ticks.store(
        s.overflow_ticks.load(std::memory_order_relaxed) + wd * static_cast<double>(end - start),
        std::memory_order_relaxed);
    if (p.error()) {
      s.overflow_errors.store(s.overflow_errors.load(std::memory_order_relaxed) + wd,
                              std::memory_order_relaxed);
    }
  }
  if (int64_t n = p.result_size_value(); n >= 0) {
    push({static_cast<uint64_t>(n), 0, site, 0, w, CellKind::kSize, false});
  }
  if (int64_t n = p.loop_iterations_value(); n >= 0) {
    push({static_cast<uint64_t>(n), 0, site, p.loop_line(), w, CellKind::kLoop, false});
  }
  ts->calls_head.store(head, std::memory_order_release);
  // Half a ring waiting: wake the background thread now instead of at its next timed wake
  // (background_wait). Checked once per half ring (16,384 records).
  const uint64_t capacity = ts->calls_mask + 1;  // 1 without a ring: never crosses
  if (crossed_half_ring(first_head, head, capacity) &&
      head - ts->calls_tail.load(std::memory_order_acquire) >= capacity / 2) {
    bg_cv_.notify_one();
  }
  if (dropped != 0) {
    ts->calls_dropped.store(ts->calls_dropped.load(std::memory_order_relaxed) + dropped,
                            std::memory_order_relaxed);
  }
  ts->recorded.store(ts->recorded.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

void Engine::record_span(Hot* h, const Site& site, uint64_t start, uint64_t end, const Probe& p,
                         uint64_t parent) {
  ThreadState* ts = h->owner;
  uint64_t head = ts->head.load(std::memory_order_relaxed);
  const uint64_t tail = ts->tail.load(std::memory_order_acquire);
  if (head - tail > ts->ring_mask) [[unlikely]] {
    // A burst faster than the export: the call goes to the aggregates (exact counts and
    // latency distribution, no span), never lost. The span context stays consistent: its
    // children keep this span's id as parent (the handler then finds no parent for them).
    ts->to_aggregates.store(ts->to_aggregates.load(std::memory_order_relaxed) + 1,
                            std::memory_order_relaxed);
    aggregate_call(h, site.id.load(std::memory_order_relaxed), start, end, p, 0, false);
    return;
  }
  SpanRecord& r = ts->ring[head & ts->ring_mask];
  r.site = site.id.load(std::memory_order_relaxed);
  r.start = start;
  r.end = end;
  r.trace_hi = ts->trace_hi;
  r.trace_lo = ts->trace_lo;
  r.span_id = ts->current_span;
  r.error = p.error();
  r.result_size = p.result_size_value();
  r.loop_iterations = p.loop_iterations_value();
  r.loop_line = p.loop_line();
  r.weight = call_weight(h, r.site);
  r.nattr = 0;
  int level = ts->recording_depth - 1;
  if (level >= 0 && level < ThreadState::kMaxRecordingDepth) {
    r.nattr = ts->attr_count[level];
    for (int i = 0; i < r.nattr; ++i) r.attrs[i] = ts->attrs[level][i];
  }
  // Complete before the release below: the background thread may read the entry from then on.
  r.parent = parent;
  ts->head.store(head + 1, std::memory_order_release);
  // Half the ring waiting: export now rather than at the next interval (checked once per half
  // ring), so a burst overflows into the aggregates as little as possible.
  const uint64_t capacity = ts->ring_mask + 1;
  if (crossed_half_ring(head, head + 1, capacity) && head + 1 - tail >= capacity / 2) {
    span_pressure_.store(true, std::memory_order_relaxed);
    bg_cv_.notify_one();
  }
  ts->recorded.store(ts->recorded.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

void Engine::analyze() {
  std::vector<tigris::EventMetrics> events;
  std::vector<uint32_t> ids;
  uint32_t nsites;
  {
    Lock l(mu_);
    reap_threads();
    nsites = static_cast<uint32_t>(sites_.size());
    if (!filter_) {
      cycles_.fetch_add(1);
      relevant_count_.store(nsites - 1);
      return;
    }
    auto t = totals();
    double nspt = ns_per_tick_.load();
    for (uint32_t id = 1; id < nsites; ++id) {
      const SiteTotals& s = t[id];
      if (s.count == 0 || sites_[id].site->id.load() == kExcludedSite) continue;
      tigris::EventMetrics e;
      e.name = sites_[id].name;
      double n = static_cast<double>(s.count);
      // Mean of the timed calls (1 in timing_period, chosen independently of their duration).
      double mean_ns = s.timed > 0 ? static_cast<double>(s.sum_ticks) * nspt / s.timed : 0;
      double window_ns = static_cast<double>(s.last - s.first) * nspt;
      double wn = static_cast<double>(s.window_calls);
      using namespace tigris::metric;
      e.metrics[std::string(kInvocationFrequency)] = n;
      e.metrics[std::string(kExecutionTime)] = mean_ns;
      e.metrics[std::string(kErrorLevel)] = static_cast<double>(s.errors);
      // Over the window between the first and the last timed call, whose call count is exact.
      e.metrics[std::string(kInterArrivalTime)] = s.window_calls > 1 ? window_ns / (wn - 1) : 0;
      // Little's law: mean concurrent executions = arrival rate x mean duration.
      e.metrics[std::string(kConcurrencyLevel)] =
          s.window_calls > 1 && window_ns > 0 ? wn / window_ns * mean_ns : 0;
      if (s.size_n > 1) {
        double m = s.size_sum / static_cast<double>(s.size_n);
        double var = (s.size_sq - s.size_n * m * m) / static_cast<double>(s.size_n - 1);
        e.metrics[std::string(kComputationPattern)] = std::sqrt(std::max(0.0, var));
      } else {
        e.metrics[std::string(kComputationPattern)] = 0;
      }
      int zeros = 64 - std::popcount(s.sessions);
      e.metrics[std::string(kUserBehavior)] =
          s.sessions == 0 ? 0 : (zeros == 0 ? 64 * std::log(64.0) : -64 * std::log(zeros / 64.0));
      for (const std::string& key : {sites_[id].name, sites_[id].function, sites_[id].mangled}) {
        auto it = static_.by_name.find(key);
        if (it != static_.by_name.end()) {
          for (const auto& [k, v] : it->second) e.metrics[k] = v;
          break;
        }
      }
      events.push_back(std::move(e));
      ids.push_back(id);
    }
  }
  std::unique_ptr<uint64_t[]> bits(new uint64_t[1 + (nsites + 63) / 64]());
  bits[0] = nsites;
  uint64_t relevant = 0;
  {
    Lock l(mu_);
    auto r = tigris::classify(*filter_, events, bindings_);
    if (!r.error.empty()) error_ = r.error;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (r.relevant[i]) {
        bits[1 + (ids[i] >> 6)] |= uint64_t{1} << (ids[i] & 63);
        ++relevant;
      }
    }
  }
  publish_relevant(std::move(bits));
  relevant_count_.store(relevant);
  cycles_.fetch_add(1);
}

void Engine::analyze_now() { analyze(); }

void Engine::fold_calls() {
  const double* bounds = sketch_bin_bounds();
  const double nspt = ns_per_tick_.load();
  if (histograms_.size() < sites_.size()) histograms_.resize(sites_.size());
  for (ThreadState* ts : threads_) {
    if (ts->calls == nullptr) continue;
    uint64_t tail = ts->calls_tail.load(std::memory_order_relaxed);
    const uint64_t head = ts->calls_head.load(std::memory_order_acquire);
    if (ts->last_parent.size() < sites_.size()) ts->last_parent.resize(sites_.size());
    for (; tail != head; ++tail) fold_record(ts, ts->calls[tail & ts->calls_mask], nspt, bounds);
    ts->calls_tail.store(tail, std::memory_order_release);
  }
}

void Engine::fold_record(ThreadState* ts, const CallRecord& r, double nspt, const double* bounds) {
  if (histograms_.size() < sites_.size()) histograms_.resize(sites_.size());
  if (r.site >= histograms_.size()) return;  // cannot happen: sites register first
  SiteHistograms& site = histograms_[r.site];
  const double w = r.weight;
  switch (r.kind) {
    case CellKind::kSize:
      site.size.add(static_cast<double>(r.value), w, bounds);
      break;
    case CellKind::kLoop:
      SiteHistograms::of(site.loops, r.sub).add(static_cast<double>(r.value), w, bounds);
      break;
    case CellKind::kLatency: {
      Histogram& hist = SiteHistograms::of(site.latency, r.sub);
      hist.add(static_cast<double>(r.value) * nspt, w, bounds);
      if (r.error) hist.errors += w;
      if (w != 1) {  // recorded at a rate below 1: the handler marks its data as estimated
        hist.sampled_calls += w;
        hist.sampled_records += 1;
      }
      if (ts == nullptr) break;
      fold_self_time(*ts, r, nspt, bounds);
      if (r.sub == 0) break;
      if (ts->last_parent.size() <= r.site) ts->last_parent.resize(sites_.size());
      auto& seen = ts->last_parent[r.site];
      auto it =
          std::find_if(seen.begin(), seen.end(), [&](const auto& e) { return e.first == r.sub; });
      if (it == seen.end()) it = seen.insert(seen.end(), {r.sub, 0});
      const uint64_t caller_call = r.caller_call & kInvocationMask;
      if (it->second != caller_call) {
        hist.parents += w;
        it->second = caller_call;
      }
      break;
    }
  }
}

void Engine::fold_self_time(ThreadState& ts, const CallRecord& r, double nspt,
                            const double* bounds) {
  if (!(r.caller_call & kOwnInvocationKnown)) return;  // a span sent here: children unknown
  const uint64_t caller = r.caller_call & kInvocationMask;
  const uint64_t own = (r.caller_call >> kOwnInvocationShift) & kOwnInvocationBits;
  // Every open entry above the caller is this call's (or left by a call whose record was lost
  // to a full ring): calls nest, and the caller and its ancestors have smaller numbers.
  uint64_t children = 0;
  auto& open = ts.open_children;
  while (!open.empty() && open.back().first > caller) {
    if ((open.back().first & kOwnInvocationBits) == own) children = open.back().second;
    open.pop_back();
  }
  const uint64_t self = r.value > children ? r.value - children : 0;
  histograms_[r.site].self.add(static_cast<double>(self) * nspt, r.weight, bounds);
  if (caller == 0) return;
  if (open.empty() || open.back().first != caller) open.emplace_back(caller, 0);
  open.back().second += r.value;
}

void Engine::fold_span(const SpanRecord& r) {
  const double* bounds = sketch_bin_bounds();
  const double nspt = ns_per_tick_.load();
  const auto w = static_cast<float>(r.weight);
  fold_record(nullptr, {r.end - r.start, 0, r.site, 0, w, CellKind::kLatency, r.error}, nspt,
              bounds);
  if (r.result_size >= 0) {
    fold_record(nullptr,
                {static_cast<uint64_t>(r.result_size), 0, r.site, 0, w, CellKind::kSize, false},
                nspt, bounds);
  }
  if (r.loop_iterations >= 0) {
    fold_record(nullptr,
                {static_cast<uint64_t>(r.loop_iterations), 0, r.site, r.loop_line, w,
                 CellKind::kLoop, false},
                nspt, bounds);
  }
  to_aggregates_.fetch_add(1, std::memory_order_relaxed);
}

void Engine::harvest_histograms(ExportBatch& b, uint64_t now_tick) {
  fold_calls();
  b.histograms_end_unix_ns = to_unix_ns(now_tick);
  const auto minute = static_cast<int64_t>(b.histograms_end_unix_ns / 60'000'000'000ull);
  // Rows by kind/site/sub: a (site, caller) histogram is both its call-site row and part of the
  // site's function row.
  std::unordered_map<uint64_t, size_t> rows;
  auto row = [&](HistogramData::Kind kind, uint32_t site, uint32_t sub) -> HistogramData& {
    uint64_t k = (uint64_t{kind} << 56) | (uint64_t{sub} << 20) | site;
    auto [it, inserted] = rows.try_emplace(k, b.histograms.size());
    if (inserted) {
      HistogramData& h = b.histograms.emplace_back();
      h.kind = kind;
      h.site = site;  // engine ids until the end, then positions in b.sites
      h.caller = kind == HistogramData::kCallSite ? sub : 0;
      h.line = kind == HistogramData::kLoop ? sub : 0;
      h.minute = minute;
    }
    return b.histograms[it->second];
  };
  auto add = [](HistogramData& h, Histogram& hist) {
    for (size_t i = 0; i < hist.bins.size(); ++i) {
      if (hist.bins[i] != 0) h.bins.emplace_back(hist.lo + static_cast<int>(i), hist.bins[i]);
    }
    h.zero += hist.zero;
    h.sum += hist.sum;
  };
  // A PERFHAT_REQUEST and a PERFHAT_FUNCTION in one function time the same calls, and the
  // handler keys both sites by that function: only the function probe's rows count them, and
  // the edge between the two is no call (issue #19). twin_of(request site) = the function site
  // of the same function that has calls in this interval (else 0: the request's rows stay).
  std::unordered_map<std::string_view, uint32_t> function_sites;
  for (size_t id = 1; id < histograms_.size() && id < sites_.size(); ++id) {
    if (sites_[id].kind != kFunction) continue;
    for (const auto& [caller, hist] : histograms_[id].latency) {
      if (!hist.empty()) {
        function_sites.emplace(sites_[id].function, static_cast<uint32_t>(id));
        break;
      }
    }
  }
  auto twin_of = [&](uint32_t id) -> uint32_t {
    if (function_sites.empty() || id >= sites_.size() || sites_[id].kind != kRequest) return 0;
    auto it = function_sites.find(sites_[id].function);
    return it == function_sites.end() ? 0 : it->second;
  };
  for (size_t id = 0; id < histograms_.size(); ++id) {
    SiteHistograms& site = histograms_[id];
    const auto sid = static_cast<uint32_t>(id);
    const uint32_t twin = twin_of(sid);
    for (auto& [caller, hist] : site.latency) {
      if (hist.empty()) continue;
      if (twin == 0) {
        HistogramData& f = row(HistogramData::kFunction, sid, 0);
        add(f, hist);
        f.errors += hist.errors;
        f.sampled_calls += hist.sampled_calls;
        f.sampled_records += hist.sampled_records;
      }
      const bool self_edge = caller != 0 && (twin == caller || twin_of(caller) == sid);
      if (caller != 0 && !self_edge) {
        HistogramData& cs = row(HistogramData::kCallSite, sid, caller);
        add(cs, hist);
        cs.parents += hist.parents;
      }
      hist.clear();
    }
    for (auto& [line, hist] : site.loops) {
      if (hist.empty()) continue;
      add(row(HistogramData::kLoop, sid, line), hist);
      hist.clear();
    }
    if (!site.size.empty()) {
      add(row(HistogramData::kResultSize, sid, 0), site.size);
      site.size.clear();
    }
    if (!site.self.empty()) {
      if (twin == 0) add(row(HistogramData::kSelfTime, sid, 0), site.self);
      site.self.clear();
    }
  }
  // Engine site ids → the batch's site table; bins ascending, one entry per index.
  std::unordered_map<uint32_t, uint32_t> site_pos;
  auto site_ref = [&](uint32_t id) {
    auto [it, inserted] = site_pos.try_emplace(id, static_cast<uint32_t>(b.sites.size()));
    if (inserted) {
      SiteInfo& si = sites_[id < sites_.size() ? id : 0];
      resolve(si);
      b.sites.push_back({si.name, si.function, si.mangled, si.file, si.line});
    }
    return it->second;
  };
  for (HistogramData& h : b.histograms) {
    h.site = site_ref(h.site);
    if (h.kind == HistogramData::kCallSite) h.caller = site_ref(h.caller);
    std::sort(h.bins.begin(), h.bins.end());
    size_t out = 0;
    for (size_t i = 0; i < h.bins.size(); ++i) {
      if (out > 0 && h.bins[out - 1].first == h.bins[i].first) {
        h.bins[out - 1].second += h.bins[i].second;
      } else {
        h.bins[out++] = h.bins[i];
      }
    }
    h.bins.resize(out);
  }
}

void Engine::export_pending(bool final) {
  Lock ex_lock(export_mu_);
  std::shared_ptr<Exporter> exporter;
  ExportBatch proto;
  std::vector<AggregateData> aggregates;
  uint32_t batch_size, max_retries, capacity;
  double backoff;
  {
    Lock l(mu_);
    exporter = exporter_;
    proto.resource = resource_;
    batch_size = std::max<uint32_t>(cfg_.batch_size, 1);
    max_retries = cfg_.max_retries;
    backoff = cfg_.retry_backoff_s;
    capacity = cfg_.queue_capacity;
    // Drain every thread's ring into the bounded queue.
    for (ThreadState* ts : threads_) {
      uint64_t tail = ts->tail.load(std::memory_order_relaxed);
      uint64_t head = ts->head.load(std::memory_order_acquire);
      for (; tail != head; ++tail) {
        const SpanRecord& r = ts->ring[tail & ts->ring_mask];
        if (!exporter) continue;  // no destination configured: phase 2 ends here
        if (queue_.size() >= capacity) {
          fold_span(r);  // into this export's aggregate rows: counted, not lost
          continue;
        }
        queue_.push_back({r, ts->tid});
      }
      ts->tail.store(tail, std::memory_order_release);
    }
    // Phase-1 aggregates since the last export.
    if (exporter) {
      auto t = totals();
      if (exported_agg_.size() < t.size()) exported_agg_.resize(t.size());
      uint64_t now_tick = now_ticks();
      double nspt = ns_per_tick_.load();
      for (size_t id = 1; id < t.size(); ++id) {
        const SiteTotals& cur = t[id];
        SiteTotals& prev = exported_agg_[id];
        if (cur.count <= prev.count) continue;
        SiteInfo& si = sites_[id];
        resolve(si);
        AggregateData a;
        a.name = si.name;
        a.function = si.function;
        a.mangled = si.mangled;
        a.file = si.file;
        a.line = si.line;
        a.count = cur.count - prev.count;
        a.errors = cur.errors - prev.errors;
        // Timed calls of this interval give its mean; an interval without one (a rarely called
        // function) falls back to the cumulative mean.
        a.timed_count = cur.timed - prev.timed;
        double mean_ticks =
            a.timed_count > 0
                ? static_cast<double>(cur.sum_ticks - prev.sum_ticks) / a.timed_count
                : (cur.timed > 0 ? static_cast<double>(cur.sum_ticks) / cur.timed : 0);
        a.sum_ns = mean_ticks * static_cast<double>(a.count) * nspt;
        a.result_size_sum = cur.size_sum - prev.size_sum;
        a.result_size_n = cur.size_n - prev.size_n;
        a.start_unix_ns = to_unix_ns(last_agg_tick_);
        a.end_unix_ns = to_unix_ns(now_tick);
        a.relevant = relevant(static_cast<uint32_t>(id));
        aggregates.push_back(std::move(a));
        // Calls that found every ring full (Slot::overflow_*): their exact weighted count and
        // total duration, as one bin at their mean.
        if (const double n = cur.overflow_n - prev.overflow_n; n > 0) {
          if (histograms_.size() < sites_.size()) histograms_.resize(sites_.size());
          Histogram& h = SiteHistograms::of(histograms_[id].latency, 0);
          const double ticks = cur.overflow_ticks - prev.overflow_ticks;
          h.add(ticks * nspt / n, n, sketch_bin_bounds());
          h.errors += cur.overflow_errors - prev.overflow_errors;
        }
        prev = cur;
      }
      harvest_histograms(proto, now_tick);
      last_agg_tick_ = now_tick;
      reap_threads();
    }
  }
  if (!exporter) return;
  ExportBatch& b = batch_;
  b.resource = std::move(proto.resource);
  // First the interval's aggregates (phase 1, histogram rows, the drop report), alone: a
  // retried request then never re-sends spans the receiver already took. The last batch's spans
  // are parked, not freed (their strings' capacity is reused, issue #5).
  for (; !b.spans.empty(); b.spans.pop_back()) spare_spans_.push_back(std::move(b.spans.back()));
  b.aggregates.swap(aggregates);
  b.sites.swap(proto.sites);
  b.histograms.swap(proto.histograms);
  b.histograms_end_unix_ns = proto.histograms_end_unix_ns;
  b.dropped = unreported_;
  if (!b.aggregates.empty() || !b.histograms.empty() || b.dropped.any()) {
    double row_calls = 0;
    for (const HistogramData& h : b.histograms) {
      if (h.kind == HistogramData::kFunction) row_calls += h.count();
    }
    if (send(*exporter, b, max_retries, backoff, final)) {
      hist_rows_exported_.fetch_add(b.histograms.size());
      unreported_ = DroppedReport{};
    } else {
      hist_rows_dropped_.fetch_add(b.histograms.size());
      unreported_.rows += b.histograms.size();
      unreported_.calls += row_calls;
    }
  }
  b.aggregates.clear();
  b.sites.clear();
  b.histograms.clear();
  b.dropped = DroppedReport{};
  size_t next = 0;  // first queue_ entry not yet exported
  while (next < queue_.size()) {
    size_t n = std::min<size_t>(batch_size, queue_.size() - next);
    // A shorter batch would free its tail's strings, and the next full one allocate them again
    // (malloc was a tenth of the export thread's time): park the tail instead (issue #5).
    for (; b.spans.size() > n; b.spans.pop_back())
      spare_spans_.push_back(std::move(b.spans.back()));
    for (; b.spans.size() < n && !spare_spans_.empty(); spare_spans_.pop_back()) {
      b.spans.push_back(std::move(spare_spans_.back()));
    }
    b.spans.resize(n);
    {
      Lock l(mu_);
      for (size_t k = 0; k < n; ++k) {
        const SpanRecord& r = queue_[next + k].record;
        SiteInfo& si = sites_[r.site < sites_.size() ? r.site : 0];
        resolve(si);
        // Every field is assigned: the SpanData is reused from the previous batch. String
        // assignment reuses its capacity.
        SpanData& s = b.spans[k];
        for (int i = 0; i < 8; ++i) {
          s.trace_id[i] = static_cast<uint8_t>(r.trace_hi >> (56 - 8 * i));
          s.trace_id[8 + i] = static_cast<uint8_t>(r.trace_lo >> (56 - 8 * i));
        }
        s.span_id = r.span_id;
        s.parent_span_id = r.parent;
        s.name = si.name;
        s.function = si.function;
        s.mangled = si.mangled;
        s.file = si.file;
        s.line = si.line;
        s.is_request = si.kind == kRequest;
        s.start_unix_ns = to_unix_ns(r.start);
        s.end_unix_ns = to_unix_ns(r.end);
        s.weight = r.weight;
        s.result_size = r.result_size;
        s.loop_iterations = r.loop_iterations;
        s.loop_line = r.loop_line;
        s.error = r.error;
        s.thread_id = queue_[next + k].tid;
        s.site = r.site < sites_.size() ? r.site : 0;
        s.attributes.resize(r.nattr);
        for (int i = 0; i < r.nattr; ++i) {
          const Attr& a = r.attrs[i];
          AttributeValue& v = s.attributes[i];
          v.key = a.key ? a.key : "";
          v.kind = static_cast<AttributeValue::Kind>(a.kind);
          v.i = a.i;
          v.d = a.d;
          v.s = a.s;
        }
      }
    }
    next += n;
    if (send(*exporter, b, max_retries, backoff, final)) {
      exported_.fetch_add(b.spans.size());
    } else {
      dropped_export_.fetch_add(b.spans.size());
      unreported_.spans += b.spans.size();
      for (const SpanData& sd : b.spans) unreported_.calls += sd.weight;
    }
  }
  queue_.clear();
}

bool Engine::send(Exporter& exporter, const ExportBatch& b, uint32_t max_retries, double backoff,
                  bool final) {
  ExportResult res = ExportResult::kRetryableFailure;
  double wait = backoff;
  for (uint32_t attempt = 0; attempt <= max_retries; ++attempt) {
    try {
      res = exporter.export_batch(b);
    } catch (...) {  // an exporter must not take the process down (exit, background thread)
      res = ExportResult::kPermanentFailure;
    }
    if (!final) register_exit_flush_after(res, b);
    if (res == ExportResult::kSuccess) return true;
    export_failures_.fetch_add(1);
    if (res == ExportResult::kPermanentFailure || attempt == max_retries) break;
    // Interruptible only by the final flush's own budget: shutdown keeps the retries short.
    std::this_thread::sleep_for(std::chrono::duration<double>(final ? wait / 4 : wait));
    wait *= 2;
  }
  return false;
}

void Engine::flush() {
  if (g_mode.load() == kUninitialized) return;
  export_pending(false);
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
  c.histogram_rows_exported = hist_rows_exported_.load();
  c.histogram_rows_dropped = hist_rows_dropped_.load();
  c.spans_exported = exported_.load();
  c.spans_dropped_queue = dropped_queue_.load();
  c.spans_dropped_export = dropped_export_.load();
  c.export_failures = export_failures_.load();
  c.analysis_cycles = cycles_.load();
  c.relevant_functions = relevant_count_.load();
  return c;
}

std::string Engine::last_error() {
  Lock l(mu_);
  return error_;
}

bool Engine::set_filter(const std::string& f) {
  if (f.empty()) {
    {
      Lock l(mu_);
      filter_.reset();
      cfg_.filter.clear();
    }
    g_relevant.store(nullptr, std::memory_order_release);
    return true;
  }
  auto r = tigris::parse(f);
  Lock l(mu_);
  if (!r) {
    error_ = "filter: " + r.error->to_string();
    return false;
  }
  filter_ = std::move(r.root);
  cfg_.filter = f;
  return true;
}

void Engine::set_sampling_rate(double r) {
  auto* s = sampler_.load();
  if (!s) return;
  s->set_max_rate(std::clamp(r, 0.0, 1.0));
  update_threshold(s->rate());
}

double Engine::sampling_rate() {
  auto* s = sampler_.load();
  return s ? s->rate() : 0;
}

void Engine::set_cycle(double s) {
  if (s > 0) cycle_s_.store(s);
}

// ---- The probe's out-of-line work ---------------------------------------------------------

int ensure_initialized() noexcept {
  static std::once_flag once;
  std::call_once(once, [] {
    EngineScope in_engine;
    if (g_mode.load() == kUninitialized) Engine::get().init(Config::from_env(), nullptr);
  });
  return g_mode.load(std::memory_order_relaxed);
}

void record_span(Hot* h, const Site& site, uint64_t start, uint64_t end, void* probe,
                 uint64_t parent) noexcept {
  Engine::get().record_span(h, site, start, end, *static_cast<const Probe*>(probe), parent);
}

void begin_request(Hot* h, const Site& site) noexcept { Engine::get().begin_request(h, site); }

// Aggregate mode's span context: the caller of a recorded call is the innermost recording probe
// on the thread (as a span's parent is), identified by its site and invocation number.
uint64_t begin_call(Hot* h, uint32_t site) noexcept {
  ThreadState* ts = h->owner;
  uint64_t caller = (uint64_t{ts->agg_site} << 48) | ts->agg_invocation;
  ts->agg_site = site;
  ts->agg_invocation = ++ts->agg_invocations & kInvocationMask;
  return caller;
}

void end_request(Hot* h, const Site& site, uint64_t start, uint64_t end) noexcept {
  Engine::get().end_request(h, site, start, end);
}

uint64_t begin_span(Hot* h) noexcept {
  ThreadState* ts = h->owner;
  uint64_t parent = ts->current_span;
  if (ts->trace_hi == 0 && ts->trace_lo == 0) {  // a span outside any request starts a trace
    ts->trace_hi = random64();
    ts->trace_lo = random64() | 1;
  }
  ts->current_span = (ts->tid << 40) ^ (++ts->span_counter) ^ (random64() & 0xFFFF000000000000ull);
  if (ts->current_span == 0) ts->current_span = 1;
  if (ts->recording_depth < ThreadState::kMaxRecordingDepth) {
    ts->attr_count[ts->recording_depth] = 0;
  }
  ++ts->recording_depth;
  // The caller keeps the parent: record_span writes it into the span (current_span is the span's
  // own id), and end_span_context restores it as the current span.
  return parent;
}

void end_span_context(Hot* h, uint64_t parent) noexcept {
  ThreadState* ts = h->owner;
  ts->current_span = parent;
  --ts->recording_depth;
  if (parent == 0 && !h->in_request) ts->trace_hi = ts->trace_lo = 0;
}

int Probe::uncaught() noexcept { return std::uncaught_exceptions(); }

// First use: initialization from the environment, site registration, thread state. Then the same
// decisions as the inline path.
void Probe::enter(Site& site) noexcept {
  if (t_in_engine) return;
  int mode = g_mode.load(std::memory_order_relaxed);
  if (mode == kDisabled || (mode == kUninitialized && ensure_initialized() != kEnabled)) return;
  uint32_t id = site.id.load(std::memory_order_relaxed);
  if (id == kExcludedSite) return;
  Hot* h = t_hot;
  if (h == nullptr || id == 0) {
    // Our return address lies inside the probed function: enough to find its symbol later.
    h = Engine::get().prepare(site, __builtin_return_address(0));
    if (h == nullptr) return;
    id = site.id.load(std::memory_order_relaxed);
  }
  decide(h, id, site);
}

// Exit of an active probe with exit work (~Probe tested for it).
void Probe::leave() noexcept {
  if ((flags_ & kClock) == 0) return finish(0);
  const uint64_t end = now_ticks();  // the clock first: excludes finish's work
  // Nested probes' cost (discount()): never more than the measured duration.
  finish(end - std::min(discount_, end - start_));
}

// Rare entry work: request root, span start, the next countdown when this call is timed, and the
// clock read.
void Probe::begin(uint64_t index, bool measure, bool record) noexcept {
  Hot* h = hot_;
  if (site_->kind == kRequest) {
    begin_request(h, *site_);
    record = relevant(static_cast<uint32_t>(slot_ - h->slots)) && h->request_sampled;
  }
  // The collection budget's per-class rate (budget_runtime): a call it leaves out that is
  // neither timed nor a request root needs no exit work at all.
  if (record && !budget::keep(static_cast<uint32_t>(slot_ - h->slots), h)) {
    record = false;
    if (!measure && site_->kind != kRequest) {
      flags_ = 0;
      return;
    }
  }
  uint8_t f = kClock;
  if (measure) {
    f |= kMeasure;
    index_ = index;
    // Uniform on [0, 2(N-1)]: mean N-1 untimed calls between timed ones, i.e. 1 in N, and
    // random so a periodic call pattern cannot alias with the sampling.
    uint32_t period = g_timing_period.load(std::memory_order_relaxed);
    uint64_t x = h->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    h->rng = x;
    slot_->countdown = period > 1 ? static_cast<uint32_t>(x % (2 * uint64_t{period} - 1)) : 0;
  }
  if (record) {
    if (g_aggregate_export.load(std::memory_order_relaxed)) {
      parent_ = begin_call(h, static_cast<uint32_t>(slot_ - h->slots));
      f |= kRecording | kAggregate;
    } else {
      parent_ = begin_span(h);
      f |= kRecording;
    }
    result_size_ = -1;
    loop_iterations_ = -1;
  }
  flags_ = f;
  discount_ = 0;
  start_ = now_ticks();  // last: the duration excludes the probe's bookkeeping
}

// Rare exit work: errors, sessions, the timing sample, the span and the request end.
void Probe::finish(uint64_t end) noexcept {
  Slot& s = *slot_;
  Hot* h = hot_;
  // Leaving by an exception (Error level metric). Checked at exit only: a probe created inside a
  // destructor during unwinding would also count, a rare over-count traded for a cheaper probe.
  bool unwinding = h->eh_uncaught == &kAlwaysCheck ? uncaught() != 0 : *h->eh_uncaught != 0;
  if ((flags_ & kForcedError) || unwinding) {
    s.errors.store(s.errors.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    flags_ |= kError;
  }
  if (h->session_hash != 0) {
    uint64_t bit = uint64_t{1} << (h->session_hash & 63);
    uint64_t cur = s.sessions.load(std::memory_order_relaxed);
    if (!(cur & bit)) s.sessions.store(cur | bit, std::memory_order_relaxed);
  }
  if (flags_ & kMeasure) {
    s.sum_ticks.store(s.sum_ticks.load(std::memory_order_relaxed) + (end - start_),
                      std::memory_order_relaxed);
    s.timed.store(s.timed.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (index_ == 0) s.first_tick.store(start_, std::memory_order_relaxed);
    s.last_tick.store(start_, std::memory_order_relaxed);
    s.last_index.store(index_, std::memory_order_relaxed);
  }
  if (flags_ & kAggregate) {
    Engine::get().aggregate_call(h, static_cast<uint32_t>(slot_ - h->slots), start_, end, *this,
                                 parent_, true);
  } else if (flags_ & kRecording) {
    record_span(h, *site_, start_, end, this, parent_);
    end_span_context(h, parent_);
  }
  if (site_->kind == kRequest) end_request(h, *site_, start_, end);
}

namespace {
Attr* next_attr(Hot* h) {
  ThreadState* ts = h->owner;
  int level = ts->recording_depth - 1;
  if (level < 0 || level >= ThreadState::kMaxRecordingDepth || ts->attr_count[level] >= 4) {
    return nullptr;
  }
  return &ts->attrs[level][ts->attr_count[level]++];
}
}  // namespace

void Probe::attr_int(const char* key, int64_t v) noexcept {
  if (!recording()) return;
  Attr* a = next_attr(hot_);
  if (!a) return;
  a->key = key;
  a->kind = Attr::kInt;
  a->i = v;
}

void Probe::attribute(const char* key, double v) noexcept {
  if (!recording()) return;
  Attr* a = next_attr(hot_);
  if (!a) return;
  a->key = key;
  a->kind = Attr::kDouble;
  a->d = v;
}

void Probe::attribute(const char* key, const char* v) noexcept {
  if (!recording()) return;
  Attr* a = next_attr(hot_);
  if (!a) return;
  a->key = key;
  a->kind = Attr::kString;
  std::strncpy(a->s, v ? v : "", sizeof(a->s) - 1);
  a->s[sizeof(a->s) - 1] = '\0';
}

}  // namespace detail

// ---- Public API -----------------------------------------------------------------------------

Config Config::from_env() {
  Config c;
  using detail::env_or;
  using detail::parse_double_env;
  const char* en = std::getenv("PERFHAT_ENABLED");
  if (en && (std::strcmp(en, "0") == 0 || std::strcmp(en, "false") == 0)) c.enabled = false;
  c.service_name = env_or("OTEL_SERVICE_NAME", c.service_name);
  c.service_version = env_or("PERFHAT_SERVICE_VERSION", env_or("OTEL_SERVICE_VERSION", ""));
  c.endpoint = env_or("PERFHAT_ENDPOINT", env_or("OTEL_EXPORTER_OTLP_ENDPOINT", ""));
  c.headers = env_or("OTEL_EXPORTER_OTLP_HEADERS", "");
  c.token = env_or("PERFHAT_TOKEN", "");
  c.protocol = env_or("OTEL_EXPORTER_OTLP_PROTOCOL", c.protocol);
  c.compression = env_or("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
                         env_or("OTEL_EXPORTER_OTLP_COMPRESSION", c.compression));
  c.filter = env_or("PERFHAT_FILTER", "");
  const char* comp = std::getenv("PERFHAT_COMPENSATE");
  if (comp && (std::strcmp(comp, "0") == 0 || std::strcmp(comp, "false") == 0)) {
    c.compensate_overhead = false;
  }
  const char* om = std::getenv("PERFHAT_OTLP_METRICS");
  c.otlp_metrics = om && (std::strcmp(om, "1") == 0 || std::strcmp(om, "true") == 0);
  c.scope = env_or("PERFHAT_SCOPE", "");
  c.static_metrics_file = env_or("PERFHAT_STATIC_METRICS", "");
  c.sampler = env_or("PERFHAT_SAMPLER", c.sampler);
  c.export_mode = env_or("PERFHAT_EXPORT", c.export_mode);
  c.sampling_rate =
      std::clamp(parse_double_env("PERFHAT_SAMPLING_RATE", c.sampling_rate), 0.0, 1.0);
  c.cycle_s = parse_double_env("PERFHAT_CYCLE_S", c.cycle_s);
  if (c.cycle_s <= 0) c.cycle_s = 120;
  c.export_interval_s = parse_double_env("PERFHAT_EXPORT_INTERVAL_S", c.export_interval_s);
  double period = parse_double_env("PERFHAT_TIMING_PERIOD", c.timing_period);
  if (period >= 1 && period <= 1e6 && period == std::floor(period)) {
    c.timing_period = static_cast<uint32_t>(period);
  } else {
    std::fprintf(stderr, "perfhat: ignoring PERFHAT_TIMING_PERIOD (an integer in [1, 1e6])\n");
  }
  // Export path sizes (issue #5): spans per POST and per-thread ring capacity.
  auto count_env = [](const char* name, uint32_t def, uint32_t hi) {
    double v = parse_double_env(name, def);
    if (v >= 1 && v <= hi && v == std::floor(v)) return static_cast<uint32_t>(v);
    std::fprintf(stderr, "perfhat: ignoring %s (an integer in [1, %u])\n", name, hi);
    return def;
  };
  c.batch_size = count_env("PERFHAT_EXPORT_BATCH", c.batch_size, 1u << 16);
  c.span_ring_per_thread = count_env("PERFHAT_SPAN_RING", c.span_ring_per_thread, 1u << 20);
  return c;
}

bool init() { return init(Config::from_env()); }
bool init(const Config& config) {
  detail::EngineScope in_engine;
  return detail::Engine::get().init(config, nullptr);
}
bool init(const Config& config, std::shared_ptr<Exporter> exporter) {
  detail::EngineScope in_engine;
  return detail::Engine::get().init(config, std::move(exporter));
}
void shutdown() {
  detail::EngineScope in_engine;
  detail::Engine::get().shutdown();
}
void flush() {
  detail::EngineScope in_engine;
  detail::Engine::get().flush();
}
std::string last_error() { return detail::Engine::get().last_error(); }
void set_sampling_rate(double r) { detail::Engine::get().set_sampling_rate(r); }
double sampling_rate() { return detail::Engine::get().sampling_rate(); }
void set_analysis_cycle(double s) { detail::Engine::get().set_cycle(s); }
void set_enabled(bool on) {
  if (detail::g_mode.load() == detail::kUninitialized) detail::ensure_initialized();
  detail::g_mode.store(on ? detail::kEnabled : detail::kDisabled);
}
bool set_filter(const std::string& f) { return detail::Engine::get().set_filter(f); }
void analyze_now() {
  detail::EngineScope in_engine;
  detail::Engine::get().analyze_now();
}
Counters counters() {
  detail::EngineScope in_engine;
  return detail::Engine::get().counters();
}

void set_session(const char* session_id) {
  detail::Hot* h = detail::t_hot;
  if (h == nullptr) return;
  uint64_t x = 1469598103934665603ull;  // FNV-1a
  for (const char* p = session_id; p && *p; ++p)
    x = (x ^ static_cast<uint8_t>(*p)) * 1099511628211ull;
  h->session_hash = session_id ? (x == 0 ? 1 : x) : 0;
}

}  // namespace perfhat
