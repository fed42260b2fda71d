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
//
// The first probe initializes from the environment (PERFHAT_*, OTEL_*); perfhat::init(Config)
// overrides it and perfhat::shutdown() flushes and stops the exporter.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace perfhat {

// Every tunable with its safe default. Config::from_env() fills it from the environment.
struct Config {
  bool enabled = true;                      // PERFHAT_ENABLED=0 disables every probe
  std::string service_name = "unknown_service";  // OTEL_SERVICE_NAME
  std::string service_version;              // OTEL_SERVICE_VERSION / PERFHAT_SERVICE_VERSION
  std::string endpoint;      // PERFHAT_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT (base URL); empty =
                             // no network export
  std::string headers;       // OTEL_EXPORTER_OTLP_HEADERS "k=v,k2=v2"
  std::string token;         // PERFHAT_TOKEN -> "Authorization: Bearer <token>"
  std::string protocol = "http/protobuf";  // OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf|http/json
  std::string filter;        // PERFHAT_FILTER, TigrisDSL; empty = every probe relevant
  std::string scope;         // PERFHAT_SCOPE "ns::*,-ns::detail::*" allow/deny patterns
  std::string static_metrics_file;  // PERFHAT_STATIC_METRICS, Understand-style CSV
  std::string sampler = "adaptive";  // PERFHAT_SAMPLER: adaptive|uniform|inverse|full|none
  double sampling_rate = 0.5;        // PERFHAT_SAMPLING_RATE: max (desired) rate
  double cycle_s = 120;              // PERFHAT_CYCLE_S: Tigris analysis cycle
  double export_interval_s = 5;      // PERFHAT_EXPORT_INTERVAL_S
  uint32_t span_ring_per_thread = 4096;  // spans buffered per thread before drops
  uint32_t queue_capacity = 65536;       // spans waiting for export before drops
  uint32_t batch_size = 512;             // spans per export request
  uint32_t max_retries = 3;              // per batch, exponential backoff
  double retry_backoff_s = 0.2;          // first backoff; doubles each retry

  // Reads the environment over the defaults above. Unparseable numbers keep the default and are
  // reported on stderr once.
  static Config from_env();
};

// Optional explicit initialization (the first probe otherwise initializes from the
// environment). Returns false and leaves probes disabled if the configuration is invalid (e.g. a
// TigrisDSL syntax error), with the reason in last_error().
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
  uint64_t spans_dropped_ring = 0;    // per-thread ring full
  uint64_t spans_dropped_queue = 0;   // export queue full
  uint64_t spans_dropped_export = 0;  // exporter failed after retries
  uint64_t export_failures = 0;       // failed attempts (each retry counts)
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
  std::atomic<uint32_t> id{0};  // 0 = not registered yet; kExcludedSite = out of scope
  const void* address = nullptr;  // function entry (-finstrument-functions); else resolved from
                                  // the registering call's return address
  const char* mangled = nullptr;  // known symbol, if any
  constexpr Site(const char* n, const char* f, const char* fl, uint32_t l, SiteKind k)
      : name(n), function(f), file(fl), line(l), kind(k) {}
};

// Phase-1 estimators of one site on one thread. Single writer (the owning thread) with relaxed
// load/store so the analysis thread may read concurrently without locks or RMW instructions.
struct Slot {
  std::atomic<uint64_t> count{0};
  std::atomic<uint64_t> sum_ticks{0};
  std::atomic<uint64_t> errors{0};
  std::atomic<uint64_t> first_tick{0};
  std::atomic<uint64_t> last_tick{0};
  std::atomic<double> size_sum{0}, size_sq{0};  // Computation Pattern (result sizes)
  std::atomic<uint64_t> size_n{0};
  std::atomic<uint64_t> sessions{0};  // linear-counting bitmap (User Behavior)
};

struct SpanRecord;
struct ThreadState;

// Thread hot state reachable from inline code.
struct Hot {
  Slot* slots = nullptr;       // indexed by site id
  uint32_t capacity = 0;       // valid slot ids are < capacity
  bool in_request = false;
  bool request_sampled = false;
  double request_weight = 1;
  uint64_t session_hash = 0;   // set by perfhat::set_session
  uint64_t rng = 0;            // xorshift state for out-of-request Bernoulli draws
  ThreadState* owner = nullptr;
};

extern std::atomic<int> g_mode;
extern std::atomic<uint64_t (*)()> g_tick_source;  // injectable clock; nullptr = TSC
// Tigris' relevant set, swapped atomically each cycle: word 0 = number of bits, then the bitset by
// site id. nullptr = every site relevant (empty filter).
extern std::atomic<const uint64_t*> g_relevant;
extern std::atomic<uint64_t> g_rate_threshold;     // out-of-request Bernoulli threshold
// initial-exec: a plain %fs-relative load on the hot path, no __tls_get_addr call.
extern constinit thread_local Hot* t_hot __attribute__((tls_model("initial-exec")));

int ensure_initialized() noexcept;                  // slow path of the first probe
Hot* prepare(Site& site) noexcept;                  // registers the site and thread state
void record_span(Hot* h, const Site& site, uint64_t start, uint64_t end, void* probe) noexcept;
void begin_request(Hot* h, const Site& site) noexcept;
void end_request(Hot* h, const Site& site, uint64_t start, uint64_t end) noexcept;
uint64_t begin_span(Hot* h) noexcept;  // returns parent span id, installs a new current span
void end_span_context(Hot* h, uint64_t parent) noexcept;

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

inline bool relevant(uint32_t id) noexcept {
  const uint64_t* bits = g_relevant.load(std::memory_order_acquire);
  if (bits == nullptr) return true;
  if (id >= bits[0]) return false;
  return (bits[1 + (id >> 6)] >> (id & 63)) & 1;
}

inline bool bernoulli(Hot* h) noexcept {
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

struct Attr {
  const char* key = nullptr;
  enum Kind : uint8_t { kInt, kDouble, kString } kind = kInt;
  int64_t i = 0;
  double d = 0;
  char s[40] = {};
};

// RAII probe. The constructor's fast path is one relaxed load and a branch when disabled; the
// object is kept small (no attribute storage: that lives per thread) so creating it costs no
// memset.
class Probe {
 public:
  [[gnu::always_inline]] explicit Probe(Site& site) noexcept : site_(&site) {
    int mode = g_mode.load(std::memory_order_relaxed);
    if (__builtin_expect(mode != kEnabled, 0)) {
      if (mode == kDisabled || ensure_initialized() != kEnabled) {
        site_ = nullptr;
        return;
      }
    }
    Hot* h = t_hot;
    uint32_t id = site.id.load(std::memory_order_relaxed);
    // id 0 (unregistered) and kExcludedSite both wrap past capacity - 1: one compare.
    if (__builtin_expect(h == nullptr || id - 1u >= h->capacity - 1u, 0)) {
      if (id == kExcludedSite || (h = prepare(site)) == nullptr) {
        site_ = nullptr;
        return;
      }
      id = site.id.load(std::memory_order_relaxed);
    }
    hot_ = h;
    id_ = id;
    if (site.kind == kRequest) begin_request(h, site);
    flags_ = 0;
    if (relevant(id) && (h->in_request ? h->request_sampled : bernoulli(h))) {
      parent_ = begin_span(h);
      flags_ = kRecording;
      result_size_ = -1;
      loop_iterations_ = -1;
    }
    start_ = now_ticks();
  }

  [[gnu::always_inline]] ~Probe() {
    if (site_ == nullptr) return;
    uint64_t end = now_ticks();
    Slot& s = hot_->slots[id_];
    uint64_t n = s.count.load(std::memory_order_relaxed);
    s.count.store(n + 1, std::memory_order_relaxed);
    s.sum_ticks.store(s.sum_ticks.load(std::memory_order_relaxed) + (end - start_),
                      std::memory_order_relaxed);
    if (n == 0) s.first_tick.store(start_, std::memory_order_relaxed);
    s.last_tick.store(start_, std::memory_order_relaxed);
    // Leaving by an exception (Error level metric). Checked at exit only: a probe created inside
    // a destructor during unwinding would also count, a rare over-count traded for one call less.
    if (__builtin_expect((flags_ & kForcedError) || uncaught() != 0, 0)) {
      s.errors.store(s.errors.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      flags_ |= kError;
    }
    if (__builtin_expect(hot_->session_hash != 0, 0)) {
      uint64_t bit = uint64_t{1} << (hot_->session_hash & 63);
      uint64_t cur = s.sessions.load(std::memory_order_relaxed);
      if (!(cur & bit)) s.sessions.store(cur | bit, std::memory_order_relaxed);
    }
    if (flags_ & kRecording) {
      record_span(hot_, *site_, start_, end, this);
      end_span_context(hot_, parent_);
    }
    if (site_->kind == kRequest) end_request(hot_, *site_, start_, end);
  }

  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;

  bool active() const noexcept { return site_ != nullptr; }
  bool recording() const noexcept { return site_ != nullptr && (flags_ & kRecording); }

  // Collection sizes: feed phase 1 (Computation Pattern) and, when recording, the span.
  void result_size(double n) noexcept {
    Slot& s = hot_->slots[id_];
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
  enum : uint8_t { kRecording = 1, kError = 2, kForcedError = 4 };
  void attr_int(const char* key, int64_t v) noexcept;
  Site* site_;
  Hot* hot_;
  uint32_t id_;
  uint8_t flags_;
  uint64_t start_;
  uint64_t parent_;
  // Only meaningful while recording (set in the constructor's recording branch).
  int64_t result_size_;
  int64_t loop_iterations_;
  uint32_t loop_line_;
};

}  // namespace detail

// Associates the calling thread's following requests with a user session (User Behavior metric).
void set_session(const char* session_id);

}  // namespace perfhat

#define PERFHAT_CONCAT_INNER(a, b) a##b
#define PERFHAT_CONCAT(a, b) PERFHAT_CONCAT_INNER(a, b)

#ifndef PERFHAT_DISABLE
#define PERFHAT_PROBE_(name, kind)                                                      \
  static ::perfhat::detail::Site PERFHAT_CONCAT(perfhat_site_, __LINE__){              \
      name, __PRETTY_FUNCTION__, __FILE__, __LINE__, ::perfhat::detail::kind};          \
  ::perfhat::detail::Probe perfhat_probe_(PERFHAT_CONCAT(perfhat_site_, __LINE__))

// RAII probe for the enclosing function.
#define PERFHAT_FUNCTION() PERFHAT_PROBE_(nullptr, kFunction)
// RAII probe for a named block inside a function.
#define PERFHAT_SCOPE(name) PERFHAT_PROBE_(name, kScope)
// Request root, e.g. PERFHAT_REQUEST("GET /tasks"): the sampling decision for everything below.
#define PERFHAT_REQUEST(type) PERFHAT_PROBE_(type, kRequest)
// Size of the returned container (perfhat.result.size). The expression is evaluated only when
// the enclosing probe is active.
#define PERFHAT_RESULT_SIZE(n)                                                   \
  do {                                                                           \
    if (perfhat_probe_.active()) perfhat_probe_.result_size(static_cast<double>(n)); \
  } while (0)
// Iterations of a loop (perfhat.loop.iterations), evaluated only when recording.
#define PERFHAT_LOOP_ITERATIONS(n)                                                     \
  do {                                                                                 \
    if (perfhat_probe_.recording())                                                    \
      perfhat_probe_.loop_iterations(static_cast<int64_t>(n), __LINE__);               \
  } while (0)
// Extra span attribute, evaluated only when the enclosing probe records a span.
#define PERFHAT_ATTRIBUTE(key, value)                                  \
  do {                                                                 \
    if (perfhat_probe_.recording()) perfhat_probe_.attribute(key, value); \
  } while (0)
// Marks the current call as failed (Error level metric) without an exception.
#define PERFHAT_ERROR()                                          \
  do {                                                           \
    if (perfhat_probe_.active()) perfhat_probe_.mark_error();    \
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
