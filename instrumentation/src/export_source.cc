// The engine as the batch exporter's source (batch_exporter.h): what its threads recorded since
// the last export, as the spans of the queue and the interval's aggregate rows. A span that
// finds the queue full is folded into the aggregates (counted, not lost).
#include "engine_internal.h"

namespace perfhat::detail {

// Phase-1 aggregates since the last export (each site's count, errors, mean and sizes since
// then), then the histograms' rows; exited threads are freed once drained.
void Engine::collect_aggregates(ExportBatch& rows) {
  auto t = totals();
  if (exported_agg_.size() < t.size()) exported_agg_.resize(t.size());
  uint64_t now_tick = now_ticks();
  double nspt = ns_per_tick();
  for (size_t id = 1; id < t.size(); ++id) {
    const SiteTotals& cur = t[id];
    SiteTotals& prev = exported_agg_[id];
    if (cur.count <= prev.count) continue;
    SiteInfo& si = sites_[id];
    resolve(si);
    AggregateData a;
    copy_site_identity(a, si);
    a.count = cur.count - prev.count;
    a.errors = cur.errors - prev.errors;
    // Timed calls of this interval give its mean; an interval without one (a rarely called
    // function) falls back to the cumulative mean.
    a.timed_count = cur.timed - prev.timed;
    double mean_ticks = a.timed_count > 0
                            ? static_cast<double>(cur.sum_ticks - prev.sum_ticks) / a.timed_count
                            : (cur.timed > 0 ? static_cast<double>(cur.sum_ticks) / cur.timed : 0);
    a.sum_ns = mean_ticks * static_cast<double>(a.count) * nspt;
    a.result_size_sum = cur.size_sum - prev.size_sum;
    a.result_size_n = cur.size_n - prev.size_n;
    a.start_unix_ns = to_unix_ns(last_agg_tick_);
    a.end_unix_ns = to_unix_ns(now_tick);
    a.relevant = relevant(static_cast<uint32_t>(id));
    rows.aggregates.push_back(std::move(a));
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
  harvest_histograms(rows, now_tick);
  last_agg_tick_ = now_tick;
  reap_threads();
}

// One queued record as the SpanData of a batch. Every field is assigned: `s` is reused from the
// previous batch, and string assignment reuses its capacity.
void Engine::fill_span(SpanData& s, const QueuedSpan& q) {
  const SpanRecord& r = q.record;
  SiteInfo& si = sites_[r.site < sites_.size() ? r.site : 0];
  resolve(si);
  for (int i = 0; i < 8; ++i) {
    s.trace_id[i] = static_cast<uint8_t>(r.trace_hi >> (56 - 8 * i));
    s.trace_id[8 + i] = static_cast<uint8_t>(r.trace_lo >> (56 - 8 * i));
  }
  s.span_id = r.span_id;
  s.parent_span_id = r.parent;
  copy_site_identity(s, si);
  s.is_request = si.kind == kRequest;
  s.start_unix_ns = to_unix_ns(r.start);
  s.end_unix_ns = to_unix_ns(r.end);
  s.weight = r.weight;
  s.result_size = r.result_size;
  s.loop_iterations = r.loop_iterations;
  s.loop_line = r.loop_line;
  s.error = r.error;
  s.thread_id = q.tid;
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

void Engine::collect(SpanQueue* queue, ExportBatch* rows) {
  Lock l(mu_);
  SpanRecord r;
  for (ThreadState* ts : threads_) {
    uint64_t tail = ts->tail.load(std::memory_order_relaxed);
    const uint64_t head = ts->head.load(std::memory_order_acquire);
    // No destination configured: phase 2 ends here, and the spans are dropped unread.
    for (; queue != nullptr && tail != head; ++tail) {
      ts->ring.read(tail & ts->ring_mask, r);
      if (!queue->offer(r, ts->tid)) fold_span(r);  // into this export's aggregate rows
    }
    ts->tail.store(head, std::memory_order_release);
  }
  if (rows == nullptr) return;
  rows->resource = resource_;
  collect_aggregates(*rows);
}

void Engine::fill(const QueuedSpan* in, SpanData* out, size_t n) {
  Lock l(mu_);
  for (size_t k = 0; k < n; ++k) fill_span(out[k], in[k]);
}

void Engine::flush() {
  if (g_mode.load() == kUninitialized) return;
  exports_.export_pending(*this, false);
}

}  // namespace perfhat::detail
