// The probe's out-of-line work, and only that: what a recorded call does on the application
// thread (request sampling, span context, the span ring, the aggregate call ring). Everything
// here runs inside the user's calls; the background work is elsewhere.
#include "engine_internal.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <mutex>

#include "budget_runtime.h"
#include "macro_compensation.h"
#include "probe_exit_warmup.h"
#include "probe_self_timing.h"

namespace perfhat::detail {

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
  ts->rearm_span = 0;
}

void Engine::end_request(Hot* h, const Site& site, uint64_t start, uint64_t end) {
  ThreadState* ts = h->owner;
  if (--ts->request_depth > 0) return;
  double rt = static_cast<double>(end - start) * ns_per_tick();
  sampler_.load()->on_response(site.name ? site.name : site.function, rt, h->request_sampled,
                               now_s());
  h->in_request = false;
  h->request_sampled = false;
  ts->trace_hi = ts->trace_lo = 0;
}

// Sampling weight of a recorded call: 1 / the probability it was recorded with.
static double call_weight(Hot* h, uint32_t site) {
  if (h->in_request) return h->request_weight * budget::weight(site, h);
  uint64_t thr = g_rate_threshold.load(std::memory_order_relaxed);
  return (thr == ~uint64_t{0} ? 1.0 : std::ldexp(1.0, 64) / static_cast<double>(thr)) *
         budget::weight(site, h);
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
    wake_background();
  }
  background_due(end);
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
  const size_t entry = head & ts->ring_mask;
  SpanFields& r = ts->ring.fields(entry);
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
    Attr* attrs = ts->ring.attrs(entry);
    for (int i = 0; i < r.nattr; ++i) attrs[i] = ts->attrs[level][i];
  }
  // Complete before the release below: the background thread may read the entry from then on.
  r.parent = parent;
  ts->head.store(head + 1, std::memory_order_release);
  // Half the ring waiting: export now rather than at the next interval (checked once per half
  // ring), so a burst overflows into the aggregates as little as possible.
  const uint64_t capacity = ts->ring_mask + 1;
  if (crossed_half_ring(head, head + 1, capacity) && head + 1 - tail >= capacity / 2) {
    exports_.request_early_export();
    wake_background();
  }
  background_due(end);
  ts->recorded.store(ts->recorded.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

int ensure_initialized() noexcept {
  static std::once_flag once;
  std::call_once(once, [] {
    EngineScope in_engine;
    if (g_mode.load() == kUninitialized) Engine::get().init(Config::from_env(), nullptr);
  });
  {
    EngineScope in_engine;
    Engine::get().finish_activation();
  }
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
  if (mode == kDisabled || (mode == kUninitialized && ensure_initialized() != kEnabled)) {
    // Off: the site's later calls stop at the probe's first test (Site::armed).
    EngineScope in_engine;
    Engine::get().park(site, __builtin_return_address(0));
    return;
  }
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
  // The clock first: excludes finish's work. A timed call's is fenced, so the function's own
  // outstanding loads finish before it and are not charged to the probe.
  const uint64_t end = (flags_ & kSelfTimed) ? fenced_ticks() : now_ticks();
  // Nested probes' cost (discount(), macro_compensation.h): never more than the duration.
  finish(end - std::min(nested_probe_ticks(hot_, *site_, discount_), end - start_));
  if (flags_ & kSelfTimed) PERFHAT_UNLIKELY {
      note_self_timing((flags_ & kRequestContext) ? kSelfTimedRequest : kSelfTimedRecord,
                       self_entry_ + (fenced_ticks() - end));
    }
}

namespace {
// A timed entry that leaves Probe::begin unrecorded: its work from begin's first clock read
// (saturated like a recorded call's entry interval, so a preempted one cannot wrap under the cap).
void note_passed_entry(uint64_t entry) noexcept {
  note_self_timing(kSelfTimedPassed,
                   static_cast<uint32_t>(std::min<uint64_t>(fenced_ticks() - entry, UINT32_MAX)));
}
}  // namespace

// Rare entry work: request root, span start, the next countdown when this call is timed, and the
// clock read.
void Probe::begin(uint64_t index, bool measure, bool record) noexcept {
  Hot* h = hot_;
  // In-situ timing of this call's own work (probe_self_timing.h), from here to the start clock.
  const bool self_timed = self_timing_due(h->owner);
  const uint64_t self_entry = self_timed ? fenced_ticks() : 0;
  const auto site_index = static_cast<uint32_t>(slot_ - h->slots);
  uint8_t f = kClock;
  if (site_->kind == kRequest) {
    // A request root is budgeted by a draw per call (budget_runtime.h): one the budget
    // passes over opens no request context (the calls inside it decide as calls outside any
    // request do) and, unless timed, does nothing more.
    const budget::Take t = budget::take_request(site_index, h, *slot_);
    if (t == budget::Take::kPass) {
      if (!measure) {
        flags_ = 0;
        if (self_timed) PERFHAT_UNLIKELY
        note_passed_entry(self_entry);
        return;
      }
      record = false;
    } else {
      if (t == budget::Take::kKeepSampled) {
        measure = true;
        index = slot_->count.load(std::memory_order_relaxed) - 1;  // the run is counted now
      }
      begin_request(h, *site_);
      f |= kRequestContext;
      record = relevant(site_index) && h->request_sampled;
    }
  } else if (record) {
    // The collection budget's per-class rate (budget_runtime): a call it leaves out that is not
    // timed needs no exit work at all. A call it samples is also a phase-1 timing sample (a
    // random subset of the calls: the mean stays unbiased).
    const budget::Take t = budget::take(site_index, h, *slot_);
    record = t != budget::Take::kPass;
    if (t == budget::Take::kKeepSampled) {
      measure = true;
      index = slot_->count.load(std::memory_order_relaxed) - 1;  // the run is counted now
    }
    if (!record && !measure) {
      flags_ = 0;
      if (self_timed) PERFHAT_UNLIKELY
      note_passed_entry(self_entry);
      return;
    }
  }
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
      ThreadState* ts = h->owner;
      if (ts->rearm_kept) ts->rearm_span = ts->current_span;  // budget_runtime.cc
    }
    h->owner->rearm_kept = false;
    result_size_ = -1;
    loop_iterations_ = -1;
  }
  if (self_timed && (f & (kRecording | kRequestContext))) f |= kSelfTimed;
  flags_ = f;
  discount_ = nested_probe_base(h, *site_);
  warm_exit_path(h);  // probe_exit_warmup.h
  // Last: the duration excludes the probe's bookkeeping. A sparse timed call (taken out of a skip
  // run, or phase 1's one in N) did that bookkeeping on cold lines: its clock waits until the
  // misses and stores are done (settled_ticks). A self-timed call keeps its entry interval,
  // saturated (32 bits wrap after a second or two of preemption; note_self_timing's cap drops it).
  if (f & kSelfTimed) PERFHAT_UNLIKELY {
      const uint64_t start = (f & kMeasure) ? settled_ticks() : now_ticks();
      self_entry_ = static_cast<uint32_t>(std::min<uint64_t>(start - self_entry, UINT32_MAX));
      start_ = start;
      return;
    }
  start_ = (f & kMeasure) ? settled_ticks() : now_ticks();
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
    if (h->owner->rearm_span == h->owner->current_span) h->owner->rearm_span = 0;
    end_span_context(h, parent_);
  }
  if (flags_ & kRequestContext) {
    end_request(h, *site_, start_, end);
    if (flags_ & kRecording) {  // of the recorded calls, a request root (budget_cost_account.h)
      std::atomic<uint64_t>& roots = h->owner->recorded_roots;
      // Release: a reader that sees the root sees its record counted (engine_budget.cc).
      roots.store(roots.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    }
  }
  if (flags_ & kClock)
    add_probe_cost(h, *site_,
                   (flags_ & kRecording) ? autoinstrument::kRecorded : autoinstrument::kClocked);
}

namespace {
// The recording call's next attribute slot, named and typed; nullptr when it has four already.
Attr* next_attr(Hot* h, const char* key, Attr::Kind kind) {
  ThreadState* ts = h->owner;
  int level = ts->recording_depth - 1;
  if (level < 0 || level >= ThreadState::kMaxRecordingDepth || ts->attr_count[level] >= 4) {
    return nullptr;
  }
  Attr* a = &ts->attrs[level][ts->attr_count[level]++];
  a->key = key;
  a->kind = kind;
  return a;
}
}  // namespace

void Probe::attr_int(const char* key, int64_t v) noexcept {
  if (!recording()) return;
  if (Attr* a = next_attr(hot_, key, Attr::kInt)) a->i = v;
}

void Probe::attribute(const char* key, double v) noexcept {
  if (!recording()) return;
  if (Attr* a = next_attr(hot_, key, Attr::kDouble)) a->d = v;
}

void Probe::attribute(const char* key, const char* v) noexcept {
  if (!recording()) return;
  Attr* a = next_attr(hot_, key, Attr::kString);
  if (!a) return;
  std::strncpy(a->s, v ? v : "", sizeof(a->s) - 1);
  a->s[sizeof(a->s) - 1] = '\0';
}

}  // namespace perfhat::detail
