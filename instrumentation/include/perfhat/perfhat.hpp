// libperfhat public API: probe macros and a handful of control functions. Deliberately tiny
// (only <atomic>, <cstdint>, <string>) so including it costs almost nothing; the recording engine
// (Tigris filtering, adaptive sampling, export) lives behind out-of-line functions.
//
//   #include <perfhat/perfhat.hpp>
//   void Backlog::load() {
//     PERFHAT_FUNCTION();                    // RAII probe, per-site static registration
//     for (auto& s : stories_) { ... }
//     PERFHAT_LOOP_ITERATIONS(stories_.size());  // evaluated only when the probe is active
//   }
//   void handle(const Req& r) { PERFHAT_REQUEST("GET /tasks"); ... }  // per-request sampling
//   void serve() { PERFHAT_REQUEST("GET /x"); PERFHAT_FUNCTION(); PERFHAT_RESULT_SIZE(n); }
//     // several probes may share a scope; the size/attribute macros bind to the innermost
//     // (last declared) one, see PERFHAT_PROBE_ below
//
// The first probe initializes from the environment (PERFHAT_*, OTEL_*); perfhat::init(Config)
// overrides it and perfhat::shutdown() flushes and stops the exporter.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

// The header is C++17 (consumers may be); the library itself is built as C++20.
#if defined(__cpp_constinit)
#define PERFHAT_CONSTINIT constinit
#elif defined(__clang__)
#define PERFHAT_CONSTINIT __attribute__((require_constant_initialization))
#else
#define PERFHAT_CONSTINIT __constinit  // GCC >= 10 in every language mode
#endif
#if __cplusplus >= 202002L
#define PERFHAT_UNLIKELY [[unlikely]]
#else
#define PERFHAT_UNLIKELY
#endif

namespace perfhat {

// Every tunable with its safe default. Config::from_env() fills it from the environment.
struct Config {
  bool enabled = true;                           // PERFHAT_ENABLED=0 disables every probe
  std::string service_name = "unknown_service";  // OTEL_SERVICE_NAME
  std::string service_version;                   // OTEL_SERVICE_VERSION / PERFHAT_SERVICE_VERSION
  std::string endpoint;  // PERFHAT_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT (base URL); empty =
                         // no network export
  std::string headers;   // OTEL_EXPORTER_OTLP_HEADERS "k=v,k2=v2"
  std::string token;     // PERFHAT_TOKEN -> "Authorization: Bearer <token>"
  std::string protocol = "http/protobuf";  // OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf|http/json
  // OTEL_EXPORTER_OTLP_[TRACES_]COMPRESSION: gzip|none. gzip (zlib level 1) shrinks protobuf
  // ~12x for a remote handler but costs ~1.7 µs of CPU per span, more than encoding it: off
  // by default (a handler on the same host or network gains nothing from it).
  std::string compression = "none";
  std::string filter;                // PERFHAT_FILTER, TigrisDSL; empty = every probe relevant
  std::string scope;                 // PERFHAT_SCOPE "ns::*,-ns::detail::*" allow/deny patterns
  std::string static_metrics_file;   // PERFHAT_STATIC_METRICS, Understand-style CSV
  std::string sampler = "adaptive";  // PERFHAT_SAMPLER: adaptive|uniform|inverse|full|none
  // PERFHAT_EXPORT: what a recorded call becomes. "spans" (one OTLP span each, readable by any
  // OTLP backend) or "aggregates" (latency, loop and size histograms per probe site and caller,
  // kept in the process and exported every interval to the handler's POST /v1/aggregates:
  // docs/aggregate-export.md; a fraction of the CPU, no per-call trace).
  std::string export_mode = "spans";
  // PERFHAT_OTLP_METRICS=1: also POST phase-1 aggregates as OTLP metrics to <endpoint>/v1/metrics
  // (an OTel Collector or metrics backend). Off by default: perfhat-handler does not serve it.
  bool otlp_metrics = false;
  double sampling_rate = 0.5;  // PERFHAT_SAMPLING_RATE: max (desired) rate
  double cycle_s = 120;        // PERFHAT_CYCLE_S: Tigris analysis cycle
  // PERFHAT_TIMING_PERIOD: phase 1 times 1 in N calls per function (randomized countdown; every
  // call is still counted). 1 = time every call (two clock reads per call).
  uint32_t timing_period = 16;
  // XRay mode with a Tigris filter: phase 1 counts in windows. While a window is open every sled
  // is patched; after PERFHAT_PHASE1_WINDOW_CALLS instrumented calls (65,536: 4,096 timed calls
  // at the default timing period) the cycle classifies and only the functions it selected stay
  // patched. The next window opens when the closed time reaches (1 - duty) / duty times the
  // window's length (PERFHAT_PHASE1_DUTY, 0.1; checked each second), and counts are scaled by
  // the time each function was counted. 0 calls: phase 1 counts every call all the time.
  uint64_t phase1_window_calls = 65536;
  // A window also closes after PERFHAT_PHASE1_WINDOW_MS milliseconds (checked every 256 calls of
  // a thread, and at the background thread's tick), so a program that makes fewer calls, or
  // ends sooner, still runs selected. 0: no time bound.
  uint32_t phase1_window_ms = 5;
  // A function leaves the open window (its sleds unpatched until the next one) once it has given
  // the window PERFHAT_PHASE1_FUNCTION_CALLS calls (1,024: 64 timed calls at the default timing
  // period) and half the window's time has passed, unless it is selected; its counts are scaled
  // by the time it was counted (at most 2x its calls). 0: no function leaves early. Set up at
  // start-up with the filter of that moment: a filter first given to a later init() never lets
  // functions leave.
  uint32_t phase1_function_calls = 1024;
  double phase1_duty = 0.1;
  // Where a process leaves its Tigris selection for the next process of the same program and
  // configuration (XRay mode with a filter): PERFHAT_SELECTION_DIR, by default
  // $XDG_CACHE_HOME/perfhat/selections or ~/.cache/perfhat/selections; "off" (or empty): none.
  // A process that finds one counts a window itself with probability phase1_duty, and otherwise
  // patches only the selected functions and takes the hooks' calibration with them; only
  // processes that counted write. Read at start-up (docs/auto-instrumentation.md).
  std::string selection_dir;
  double export_interval_s = 5;          // PERFHAT_EXPORT_INTERVAL_S
  uint32_t span_ring_per_thread = 4096;  // PERFHAT_SPAN_RING: spans per thread before drops
  uint32_t queue_capacity = 65536;       // spans waiting for export before drops
  // PERFHAT_EXPORT_BATCH: spans per export request. 2048 (~1 MB of protobuf) cost 20 % less
  // export CPU per span than 512 on the sample service (fewer POSTs); far below the handler's
  // 16 MB body limit even with long names and four string attributes per span.
  uint32_t batch_size = 2048;
  // PERFHAT_COMPENSATE=0 turns it off. A call's measured duration leaves out the probes of the
  // instrumented calls nested in it (their cost per kind of probe is measured at start-up), so
  // a function reports its own time, not its callees' probes: automatic instrumentation and,
  // for the probes that did exit work (timed or recorded), the probe macros.
  bool compensate_overhead = true;
  uint32_t max_retries = 3;      // per batch, exponential backoff
  double retry_backoff_s = 0.2;  // first backoff; doubles each retry
  // Probe distribution across variants (docs/plan.md "Running a variant"): with a release
  // manifest of `perfhat-plan variants`, only the chosen variant's functions are probed; the
  // others cost what a probe outside PERFHAT_SCOPE costs. The variant is `variant` (>= 0) or the
  // manifest's assignment of `replica`. Release, variant and replica go with every record.
  std::string variant_manifest;  // PERFHAT_VARIANT_MANIFEST: path; empty = every probe on
  int64_t replica = -1;          // PERFHAT_REPLICA: this process's replica number
  int64_t variant = -1;          // PERFHAT_VARIANT: variant id (wins over the replica's)

  // Reads the environment over the defaults above. Unparseable numbers keep the default and are
  // reported on stderr once.
  static Config from_env();
};

// Optional explicit initialization (the first probe otherwise initializes from the
// environment). Returns false and leaves probes disabled if the configuration is invalid (e.g. a
// TigrisDSL syntax error), with the reason in last_error(). init() = init(Config::from_env()).
bool init();
bool init(const Config& config);
// Flushes buffered spans and aggregates, stops background threads. Probes become no-ops.
void shutdown();
// Exports what is buffered now (blocking the caller, never the probes).
void flush();
std::string last_error();

// Runtime controls (thesis: sampling rate and analysis cycle adjustable at run time).
void set_sampling_rate(double max_rate);
double sampling_rate();
void set_analysis_cycle(double seconds);
void set_enabled(bool on);
bool set_filter(const std::string& tigris_dsl);  // false + last_error() on a syntax error
// Runs the Tigris grouping/classification now instead of waiting for the cycle.
void analyze_now();

struct Counters {
  uint64_t spans_recorded = 0;
  uint64_t spans_exported = 0;
  uint64_t spans_dropped_ring = 0;  // unused: a full span ring sends the call to the
                                    // aggregates (spans_to_aggregates)
  // Span export: recorded calls exported as aggregate rows instead of spans because the thread's
  // span ring or the export queue was full (exact counts, no per-call trace).
  uint64_t spans_to_aggregates = 0;
  uint64_t spans_dropped_queue = 0;        // unused: a full queue folds into the aggregates
  uint64_t spans_dropped_export = 0;       // exporter failed after retries
  uint64_t records_dropped_histogram = 0;  // aggregate mode: a call, its loop count or its size
                                           // not recorded (the thread's ring was full)
  uint64_t histogram_rows_exported = 0;    // aggregate mode: rows accepted by the exporter
  uint64_t histogram_rows_dropped = 0;     // aggregate mode: rows the exporter failed to send
  uint64_t export_failures = 0;            // failed attempts (each retry counts)
  uint64_t analysis_cycles = 0;
  uint64_t relevant_functions = 0;
};
Counters counters();

namespace detail {

enum : int { kUninitialized = 0, kDisabled = 1, kEnabled = 2 };
enum SiteKind : uint8_t { kFunction = 0, kScope = 1, kRequest = 2 };
inline constexpr uint32_t kExcludedSite = 0xFFFFFFFFu;

// One per probe site, a constant-initialized function-local static: no guard variable.
struct Site {
  const char* name;      // scope / request name, or nullptr for PERFHAT_FUNCTION
  const char* function;  // __PRETTY_FUNCTION__
  const char* file;
  uint32_t line;
  SiteKind kind;
  // The probe's one entry test. 1: take the enabled path (first use, initialization, or
  // recording); 0: do nothing -- probes are disabled, or this site is outside PERFHAT_SCOPE or
  // this replica's variant. Folding the global switch and the site's admission into one byte of
  // the site makes a masked probe run exactly the instructions of a disabled one (issue 23); the
  // engine recomputes it for every registered site when either changes (site_arming.cc).
  std::atomic<uint8_t> armed{1};
  std::atomic<uint32_t> id{0};    // 0 = not registered yet; kExcludedSite = out of scope
  const void* address = nullptr;  // function entry (-finstrument-functions); else resolved from
                                  // the registering call's return address
  const char* mangled = nullptr;  // known symbol, if any
  constexpr Site(const char* n, const char* f, const char* fl, uint32_t l, SiteKind k)
      : name(n), function(f), file(fl), line(l), kind(k) {}
};

// Phase-1 estimators of one site on one thread. Single writer (the owning thread) with relaxed
// load/store so the analysis thread may read concurrently without locks or RMW instructions.
// Every call is counted; only 1 in Config::timing_period calls (chosen by a randomized per-slot
// countdown, independent of the call's duration) is timed, so the two clock reads are paid rarely
// and sum_ticks / timed is an unbiased estimate of the mean execution time.
struct alignas(64) Slot {
  // What every active call touches, in one cache line.
  std::atomic<uint64_t> count{0};  // every call
  uint32_t countdown = 0;          // untimed calls before the next timed one (owner only)
  // Collection budget (budget_runtime.h): calls still to pass over before the next taken one. A
  // passed-over call does nothing else; the next taken call adds the run to `count`.
  // Atomic only so the budget's snapshot may read it; the owner's relaxed load and store are plain
  // moves.
  std::atomic<uint32_t> budget_skip{0};
  std::atomic<uint64_t> timed{0};       // calls whose duration is in sum_ticks
  std::atomic<uint64_t> sum_ticks{0};   // sum of the timed calls' durations
  std::atomic<uint64_t> errors{0};      // every call (exception or PERFHAT_ERROR)
  std::atomic<uint64_t> first_tick{0};  // start of call 0 (always timed)
  std::atomic<uint64_t> last_tick{0};   // start of the last timed call ...
  std::atomic<uint64_t> last_index{0};  // ... and its index: last_index + 1 calls started in
                                        // [first_tick, last_tick] (Inter-Arrival Time)
  std::atomic<double> size_sum{0}, size_sq{0};  // Computation Pattern (result sizes)
  std::atomic<uint64_t> size_n{0};
  std::atomic<uint64_t> sessions{0};  // linear-counting bitmap (User Behavior)
  // Recorded calls that found both the span ring and the call ring full: weighted count,
  // weighted duration and weighted errors, exported as the site's aggregate row so counts stay
  // exact whatever the burst (Engine::overflow_call).
  std::atomic<double> overflow_n{0}, overflow_ticks{0}, overflow_errors{0};
  // Collection budget (written by the owner only): the length of the current skip run, counted
  // when it ends, and the probability it was drawn with (0: no run, the next call is a fresh
  // draw).
  std::atomic<uint32_t> budget_run{0};
  float budget_p = 0;
};

struct ThreadState;

// Thread hot state read by the inline (enabled) probe.
struct Hot {
  Slot* slots = nullptr;  // indexed by site id
  uint32_t capacity = 0;  // valid slot ids are < capacity
  bool in_request = false;
  bool request_sampled = false;
  double request_weight = 1;
  uint64_t session_hash = 0;  // set by perfhat::set_session
  uint64_t rng = 0;           // xorshift state for out-of-request Bernoulli draws
  // This thread's std::uncaught_exceptions() counter (Itanium ABI __cxa_eh_globals), read with
  // one load instead of a call into the runtime on every probe exit. Points at a constant 1 if
  // the layout check failed, which sends every exit to the slow path (exact, slower).
  const unsigned* eh_uncaught = nullptr;
  ThreadState* owner = nullptr;
};

extern std::atomic<int> g_mode;
// Tigris' relevant set, swapped atomically each cycle: word 0 = number of bits, then the bitset by
// site id. nullptr = every site relevant (empty filter).
extern std::atomic<const uint64_t*> g_relevant;
extern std::atomic<uint64_t> g_rate_threshold;  // out-of-request Bernoulli threshold
// initial-exec: a plain %fs-relative load on the hot path, no __tls_get_addr call.
extern PERFHAT_CONSTINIT thread_local Hot* t_hot __attribute__((tls_model("initial-exec")));

inline bool relevant(uint32_t id) noexcept {
  const uint64_t* bits = g_relevant.load(std::memory_order_acquire);
  if (bits == nullptr) return true;
  if (id >= bits[0]) return false;
  return (bits[1 + (id >> 6)] >> (id & 63)) & 1;
}

[[gnu::always_inline]] inline bool bernoulli(Hot* h) noexcept {
  uint64_t thr = g_rate_threshold.load(std::memory_order_relaxed);
  if (thr == ~uint64_t{0}) return true;
  if (thr == 0) return false;
  uint64_t x = h->rng;  // xorshift64
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  h->rng = x;
  return x < thr;
}

// Whether `id` is a registered site with a slot on the thread whose state is `h`. id 0
// (unregistered) and kExcludedSite both wrap past capacity - 1: one compare.
[[gnu::always_inline]] inline bool has_slot(const Hot* h, uint32_t id) noexcept {
  return h != nullptr && id - 1u < h->capacity - 1u;
}

// What a call of a registered site needs, read before anything is written: kCountOnly, kSkipRun,
// or a combination of the other bits. The one statement of which calls phase 1 only counts:
// Probe::decide acts on it, and the compiler hooks take a kCountOnly call without constructing a
// probe (autoinstrument's count_only).
enum CallPath : uint8_t {
  kCountOnly = 0,   // counted, nothing else: not timed (its slot's countdown has not run out), not
                    // a request root, and not recorded whatever the sampler says (its site is not
                    // relevant, or the thread is inside a request the sampler did not draw)
  kRecordable = 1,  // counted; relevant, and outside any request (the sampler draws whether it is
                    // recorded) or inside one the sampler drew (recorded)
  kBegin = 2,       // counted; timed (the countdown ran out) or a request root: Probe::begin
  kSkipRun = 4,     // inside a collection-budget skip run: one decrement, nothing else
};
[[gnu::always_inline]] inline uint8_t call_path(const Hot& h, const Slot& s, uint32_t id,
                                                const Site& site) noexcept {
  if (s.budget_skip.load(std::memory_order_relaxed) != 0) return kSkipRun;
  // A request root's own recording is its request's (Probe::begin), never drawn here.
  if (site.kind == kRequest) return kBegin;
  const uint8_t timed = s.countdown == 0 ? kBegin : kCountOnly;
  if (!relevant(id) || (h.in_request && !h.request_sampled)) return timed;
  return timed | kRecordable;
}
// Phase 1's count of a call that is not skipped; its index among the slot's calls. The countdown
// wraps at 0 (kTimed): Probe::begin then draws the next one.
[[gnu::always_inline]] inline uint64_t count_call(Slot& s) noexcept {
  const uint64_t n = s.count.load(std::memory_order_relaxed);
  s.count.store(n + 1, std::memory_order_relaxed);
  s.countdown = s.countdown - 1;
  return n;
}

struct Attr {
  const char* key = nullptr;
  enum Kind : uint8_t { kInt, kDouble, kString } kind = kInt;
  int64_t i = 0;
  double d = 0;
  char s[40] = {};
};

// RAII probe. What the probed function runs when probes are disabled, or when its site is
// outside the scope or the replica's variant, is one relaxed load of the site's `armed` byte and
// a branch at entry, a store and a test of slot_ at exit. Everything an enabled probe
// does sits behind that one branch, laid out off the function's fast path (GCC moves
// [[unlikely]] blocks out of line): the phase-1 fast path (count and countdown in the thread's
// slot, the relevance/sampling test) inline there, everything rarer (first use, timed calls,
// spans, requests, errors, sessions) in out-of-line functions. The enabled code keeps no value
// of its own live across the function body except this object (in the frame), so it adds no
// callee-saved register to the disabled path (the function's own values that must survive the
// possible enter() call may still get one; see bench/README.md "Restructured probe").
class Probe {
 public:
  [[gnu::always_inline]] explicit Probe(Site& site) noexcept {
    slot_ = nullptr;
    // A site starts armed: its first call goes to enter(), which initializes from the
    // environment, registers the site and disarms it when it is not to be probed.
    if (site.armed.load(std::memory_order_relaxed) != 0) PERFHAT_UNLIKELY
    start(site);
  }

  [[gnu::always_inline]] ~Probe() {
    // Active probes only. One test for all rare exit work -- flags (timed, recording, request,
    // PERFHAT_ERROR), an exception in flight, a user session to note.
    if (slot_ != nullptr) PERFHAT_UNLIKELY {
        if ((flags_ | *hot_->eh_uncaught | hot_->session_hash) != 0) leave();
      }
  }

  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;

  bool active() const noexcept { return slot_ != nullptr; }
  bool recording() const noexcept { return slot_ != nullptr && (flags_ & kRecording); }
  // This call reads the clock (timed, recorded or a request): its duration is measured.
  bool clocked() const noexcept { return slot_ != nullptr && (flags_ & kClock); }
  // Overhead compensation (auto-instrumentation): ticks spent in probes nested inside this call,
  // taken off its measured duration at exit. Only on a clocked probe.
  void discount(uint64_t ticks) noexcept { discount_ += ticks; }

  // Collection sizes: feed phase 1 (Computation Pattern) and, when recording, the span.
  void result_size(double n) noexcept {
    Slot& s = *slot_;
    s.size_n.store(s.size_n.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    s.size_sum.store(s.size_sum.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    s.size_sq.store(s.size_sq.load(std::memory_order_relaxed) + n * n, std::memory_order_relaxed);
    if (flags_ & kRecording) result_size_ = static_cast<int64_t>(n);
  }
  void loop_iterations(int64_t n, uint32_t line) noexcept {
    loop_iterations_ = n;
    loop_line_ = line;
  }
  void mark_error() noexcept { flags_ |= kForcedError; }
  // Attributes are stored per thread for the innermost recording span (spans nest strictly).
  void attribute(const char* key, long v) noexcept { attr_int(key, v); }
  void attribute(const char* key, int v) noexcept { attr_int(key, v); }
  void attribute(const char* key, long long v) noexcept { attr_int(key, static_cast<int64_t>(v)); }
  void attribute(const char* key, unsigned v) noexcept { attr_int(key, v); }
  void attribute(const char* key, unsigned long v) noexcept {
    attr_int(key, static_cast<int64_t>(v));
  }
  void attribute(const char* key, bool v) noexcept { attr_int(key, v); }
  void attribute(const char* key, double v) noexcept;
  void attribute(const char* key, const char* v) noexcept;
  void attribute(const char* key, const std::string& v) noexcept { attribute(key, v.c_str()); }

  // Read by record_span.
  int64_t result_size_value() const { return result_size_; }
  int64_t loop_iterations_value() const { return loop_iterations_; }
  uint32_t loop_line() const { return loop_iterations_ >= 0 ? loop_line_ : 0; }
  bool error() const { return flags_ & (kError | kForcedError); }

  static int uncaught() noexcept;

 private:
  // kClock: the clock was read at entry (timed, recording or request); kMeasure: this call is a
  // phase-1 timing sample (countdown only, so the sample is independent of sampling decisions);
  // kAggregate: the recorded call goes to the thread's histograms, not to a span.
  enum : uint8_t {
    kRecording = 1,
    kError = 2,
    kForcedError = 4,
    kClock = 8,
    kMeasure = 16,
    kAggregate = 32,
    kRequestContext = 64,  // a request root that opened its request's context (begin_request)
    kSelfTimed = 128,      // its out-of-line work is timed in situ (probe_self_timing.h)
  };

  // Enabled (or not yet initialized) entry, inline in the unlikely block.
  [[gnu::always_inline]] void start(Site& site) noexcept {
    Hot* h = t_hot;
    uint32_t id = site.id.load(std::memory_order_relaxed);
    // g_mode is not read: while it is kUninitialized no thread has a Hot (t_hot == nullptr leads
    // to enter()), and a registered site is disarmed when probes are turned off.
    if (!has_slot(h, id)) PERFHAT_UNLIKELY {
        // Excluded but still armed: only while the engine is re-arming its sites.
        if (id == kExcludedSite) return;
        return enter(site);
      }
    decide(h, id, site);
  }
  // Phase 1 for every call, then the per-call decisions (call_path); slot_ != nullptr from here
  // on. Laid out so the common case (no request root, not recorded, untimed) runs straight
  // through.
  [[gnu::always_inline]] void decide(Hot* h, uint32_t id, Site& site) noexcept {
    Slot* s = &h->slots[id];
    const uint8_t path = call_path(*h, *s, id, site);
    // No branch hint on the skip: without a budget the skip is always 0, under one it is mostly
    // not, and GCC's default lays the skip out of line and the counted path straight through
    // (the same instructions either way: bench/budget/skip_cost_test.sh).
    if (path == kSkipRun) {
      s->budget_skip.store(s->budget_skip.load(std::memory_order_relaxed) - 1,
                           std::memory_order_relaxed);
      return;  // the probe stays inactive
    }
    const uint32_t cd = s->countdown;
    const uint64_t n = count_call(*s);
    slot_ = s;
    hot_ = h;
    site_ = &site;
    flags_ = 0;
    // A kRecordable call inside a request is recorded (the request was drawn), else drawn.
    const bool record = (path & kRecordable) && (h->in_request || bernoulli(h));
    if ((path & kBegin) | record) PERFHAT_UNLIKELY
    begin(n, cd == 0, record);
  }
  // First use of a site or thread, or initialization. Called directly from the probed function
  // (never through another frame): its return address lies inside that function, which is how
  // the site's symbol is found.
  [[gnu::noinline, gnu::cold]] void enter(Site& site) noexcept;
  // Rare entry work (request root, span start, next countdown), ending with the clock read.
  [[gnu::noinline]] void begin(uint64_t index, bool measure, bool record) noexcept;
  // Exit work: the clock read first, then errors, sessions, timing sample, span, request end.
  [[gnu::noinline]] void leave() noexcept;
  void finish(uint64_t end) noexcept;
  void attr_int(const char* key, int64_t v) noexcept;
  // The compiler hooks' frames (autoinstrument): the start-up calibration forces a call's kind,
  // and a call the hooks only counted (no probe constructed) gets one for its rare exit work.
  friend struct HookProbe;
  // A counted call's probe as decide() leaves it: active, no flags.
  Probe(Slot* slot, Hot* h, Site* site) noexcept : slot_(slot), hot_(h), site_(site), flags_(0) {}

  // slot_ is the only member an inactive probe writes; the rest is written when the probe
  // becomes active (the recording-only ones by begin()'s recording branch). The three pointers
  // stored on every active call are kept apart: adjacent, GCC packs their stores into SSE
  // shuffles that cost more than the plain stores.
  Slot* slot_;  // nullptr = inactive (disabled, excluded, ...): the destructor does nothing
  uint64_t start_;
  Hot* hot_;
  uint64_t index_;  // call index of a measured call
  Site* site_;
  uint8_t flags_;
  uint64_t parent_;  // the enclosing recording span's id, or (aggregate mode) caller site + call
  int64_t result_size_;
  int64_t loop_iterations_;
  uint32_t loop_line_;
  uint32_t self_entry_;  // kSelfTimed: ticks from begin()'s start to the start clock read
  uint64_t discount_;    // set by begin(), with the clock read
};

// Innermost-probe lookup for the size/attribute macros. Each probe macro declares, besides its
// uniquely named object, a reference and a rank named after its kind
// (perfhat_probe_kFunction / perfhat_rank_kFunction, ...). The rank is 1 + the highest rank
// visible where it is declared, so the probe declared last (innermost) has the highest rank; the
// kinds not declared in an enclosing scope resolve to the namespace-scope fallbacks below (rank 0).
struct NoProbe {};
template <int RF, int RS, int RR, typename F, typename S, typename R>
constexpr auto& innermost(F& f, S& s, R& r) noexcept {
  static_assert(RF + RS + RR > 0,
                "PERFHAT_RESULT_SIZE/LOOP_ITERATIONS/ATTRIBUTE/ERROR need a PERFHAT_FUNCTION, "
                "PERFHAT_SCOPE or PERFHAT_REQUEST earlier in the same or an enclosing scope");
  if constexpr (RF >= RS && RF >= RR) {
    return f;
  } else if constexpr (RS >= RR) {
    return s;
  } else {
    return r;
  }
}
constexpr int max_rank(int a, int b, int c) { return a > b ? (a > c ? a : c) : (b > c ? b : c); }

}  // namespace detail

// Associates the calling thread's following requests with a user session (User Behavior metric).
void set_session(const char* session_id);

}  // namespace perfhat

#define PERFHAT_CONCAT_INNER(a, b) a##b
#define PERFHAT_CONCAT(a, b) PERFHAT_CONCAT_INNER(a, b)

// Fallbacks found by unqualified lookup where no probe of that kind is in scope (see innermost).
inline constexpr ::perfhat::detail::NoProbe perfhat_probe_kFunction{}, perfhat_probe_kScope{},
    perfhat_probe_kRequest{};
inline constexpr int perfhat_rank_kFunction = 0, perfhat_rank_kScope = 0, perfhat_rank_kRequest = 0;

#ifndef PERFHAT_DISABLE
// One probe: a constant-initialized static Site and the RAII object, both uniquely named
// (__COUNTER__), so a PERFHAT_REQUEST and a PERFHAT_FUNCTION may share a scope. Binding rule of
// PERFHAT_RESULT_SIZE / LOOP_ITERATIONS / ATTRIBUTE / ERROR: they apply to the innermost probe
// declared before them, i.e. the one declared last in the same or an enclosing block scope.
// At most one probe of each kind per block scope (open a block for a second PERFHAT_SCOPE).
#define PERFHAT_PROBE_(name, kind) PERFHAT_PROBE_N_(name, kind, __COUNTER__)
#define PERFHAT_PROBE_N_(name, kind, n)                                                         \
  static ::perfhat::detail::Site PERFHAT_CONCAT(perfhat_site_, n){                              \
      name, __PRETTY_FUNCTION__, __FILE__, __LINE__, ::perfhat::detail::kind};                  \
  ::perfhat::detail::Probe PERFHAT_CONCAT(perfhat_probe_, n)(PERFHAT_CONCAT(perfhat_site_, n)); \
  [[maybe_unused]] static constexpr int PERFHAT_CONCAT(perfhat_rank_, n) =                      \
      1 + ::perfhat::detail::max_rank(perfhat_rank_kFunction, perfhat_rank_kScope,              \
                                      perfhat_rank_kRequest);                                   \
  [[maybe_unused]] static constexpr int perfhat_rank_##kind = PERFHAT_CONCAT(perfhat_rank_, n); \
  [[maybe_unused]] ::perfhat::detail::Probe& perfhat_probe_##kind =                             \
      PERFHAT_CONCAT(perfhat_probe_, n)
// The innermost probe in scope (compile error if there is none).
#define PERFHAT_INNERMOST_()                                                \
  ::perfhat::detail::innermost<perfhat_rank_kFunction, perfhat_rank_kScope, \
                               perfhat_rank_kRequest>(                      \
      perfhat_probe_kFunction, perfhat_probe_kScope, perfhat_probe_kRequest)

// RAII probe for the enclosing function.
#define PERFHAT_FUNCTION() PERFHAT_PROBE_(nullptr, kFunction)
// RAII probe for a named block inside a function.
#define PERFHAT_SCOPE(name) PERFHAT_PROBE_(name, kScope)
// Request root, e.g. PERFHAT_REQUEST("GET /tasks"): the sampling decision for everything below.
#define PERFHAT_REQUEST(type) PERFHAT_PROBE_(type, kRequest)
// Size of the returned container (perfhat.result.size). The expression is evaluated only when
// the innermost probe is active.
#define PERFHAT_RESULT_SIZE(n)                                               \
  do {                                                                       \
    auto& perfhat_p_ = PERFHAT_INNERMOST_();                                 \
    if (perfhat_p_.active()) perfhat_p_.result_size(static_cast<double>(n)); \
  } while (0)
// Iterations of a loop (perfhat.loop.iterations), evaluated only when recording.
#define PERFHAT_LOOP_ITERATIONS(n)                                                             \
  do {                                                                                         \
    auto& perfhat_p_ = PERFHAT_INNERMOST_();                                                   \
    if (perfhat_p_.recording()) perfhat_p_.loop_iterations(static_cast<int64_t>(n), __LINE__); \
  } while (0)
// Extra span attribute, evaluated only when the innermost probe records a span.
#define PERFHAT_ATTRIBUTE(key, value)                             \
  do {                                                            \
    auto& perfhat_p_ = PERFHAT_INNERMOST_();                      \
    if (perfhat_p_.recording()) perfhat_p_.attribute(key, value); \
  } while (0)
// Marks the current call as failed (Error level metric) without an exception.
#define PERFHAT_ERROR()                               \
  do {                                                \
    auto& perfhat_p_ = PERFHAT_INNERMOST_();          \
    if (perfhat_p_.active()) perfhat_p_.mark_error(); \
  } while (0)
#else
#define PERFHAT_FUNCTION() ((void)0)
#define PERFHAT_SCOPE(name) ((void)0)
#define PERFHAT_REQUEST(type) ((void)0)
#define PERFHAT_RESULT_SIZE(n) ((void)0)
#define PERFHAT_LOOP_ITERATIONS(n) ((void)0)
#define PERFHAT_ATTRIBUTE(key, value) ((void)0)
#define PERFHAT_ERROR() ((void)0)
#endif
