// The export pipeline (what OpenTelemetry calls a batch span processor): the threads' span
// rings drain into a bounded queue, which leaves in batches of batch_size with retries; each
// interval's aggregate rows go first, alone; what is lost is counted and reported.
#include "engine_internal.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace perfhat::detail {

// Phase-1 aggregates since the last export (each site's count, errors, mean and sizes since
// then), then the histograms' rows; exited threads are freed once drained.
void Engine::collect_aggregates(std::vector<AggregateData>& aggregates, ExportBatch& proto) {
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
    double mean_ticks = a.timed_count > 0
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
    if (exporter) collect_aggregates(aggregates, proto);
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
      for (size_t k = 0; k < n; ++k) fill_span(b.spans[k], queue_[next + k]);
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

}  // namespace perfhat::detail
