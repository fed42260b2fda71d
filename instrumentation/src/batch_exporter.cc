#include "batch_exporter.h"

#include <algorithm>

namespace perfhat::detail {

ExportPolicy ExportPolicy::from(const Config& cfg) {
  ExportPolicy p;
  p.batch_size = std::max<uint32_t>(cfg.batch_size, 1);
  p.queue_capacity = cfg.queue_capacity;
  p.max_retries = cfg.max_retries;
  p.retry_backoff_s = cfg.retry_backoff_s;
  p.interval_s = cfg.export_interval_s;
  return p;
}

BatchExporter::BatchExporter(Environment env) : env_(std::move(env)) {}

void BatchExporter::configure(std::shared_ptr<Exporter> exporter, const ExportPolicy& policy) {
  Lock l(config_mu_);
  exporter_ = std::move(exporter);
  policy_ = policy;
  policy_.batch_size = std::max<uint32_t>(policy_.batch_size, 1);
  last_export_s_ = env_.now_s();
  early_.store(false);
}

std::shared_ptr<Exporter> BatchExporter::exporter() {
  Lock l(config_mu_);
  return exporter_;
}

double BatchExporter::next_due_s() {
  Lock l(config_mu_);
  return last_export_s_ + policy_.interval_s;
}

bool BatchExporter::export_if_due(ExportSource& source) {
  const double now = env_.now_s();
  {
    Lock l(config_mu_);
    if (!early_.exchange(false) && now - last_export_s_ < policy_.interval_s) return false;
    last_export_s_ = now;
  }
  export_pending(source, false);
  return true;
}

void BatchExporter::export_pending(ExportSource& source, bool final) {
  Lock l(mu_);
  std::shared_ptr<Exporter> exporter;
  ExportPolicy policy;
  {
    Lock c(config_mu_);
    exporter = exporter_;
    policy = policy_;
  }
  queue_.capacity_ = policy.queue_capacity;
  ExportBatch rows;
  source.collect(exporter ? &queue_ : nullptr, exporter ? &rows : nullptr);
  if (!exporter) return;
  send_rows(*exporter, std::move(rows), policy, final);
  send_spans(source, *exporter, policy, final);
}

// The interval's aggregates (phase 1, histogram rows, the drop report) leave first, alone: a
// retried request then never re-sends spans the receiver already took. The last batch's spans
// are parked, not freed.
void BatchExporter::send_rows(Exporter& exporter, ExportBatch&& rows, const ExportPolicy& policy,
                              bool final) {
  ExportBatch& b = batch_;
  b.resource = std::move(rows.resource);
  for (; !b.spans.empty(); b.spans.pop_back()) spare_spans_.push_back(std::move(b.spans.back()));
  b.aggregates.swap(rows.aggregates);
  b.sites.swap(rows.sites);
  b.histograms.swap(rows.histograms);
  b.histograms_end_unix_ns = rows.histograms_end_unix_ns;
  b.dropped = unreported_;
  if (!b.aggregates.empty() || !b.histograms.empty() || b.dropped.any()) {
    double row_calls = 0;
    for (const HistogramData& h : b.histograms) {
      if (h.kind == HistogramData::kFunction) row_calls += h.count();
    }
    if (send(exporter, b, policy, final)) {
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
}

void BatchExporter::send_spans(ExportSource& source, Exporter& exporter, const ExportPolicy& policy,
                               bool final) {
  ExportBatch& b = batch_;
  std::vector<QueuedSpan>& queue = queue_.spans_;
  size_t next = 0;  // first queue entry not yet exported
  while (next < queue.size()) {
    const size_t n = std::min<size_t>(policy.batch_size, queue.size() - next);
    // A shorter batch would free its tail's strings, and the next full one allocate them again:
    // park the tail instead.
    for (; b.spans.size() > n; b.spans.pop_back())
      spare_spans_.push_back(std::move(b.spans.back()));
    for (; b.spans.size() < n && !spare_spans_.empty(); spare_spans_.pop_back()) {
      b.spans.push_back(std::move(spare_spans_.back()));
    }
    b.spans.resize(n);
    source.fill(queue.data() + next, b.spans.data(), n);
    next += n;
    if (send(exporter, b, policy, final)) {
      exported_.fetch_add(b.spans.size());
    } else {
      dropped_export_.fetch_add(b.spans.size());
      unreported_.spans += b.spans.size();
      for (const SpanData& sd : b.spans) unreported_.calls += sd.weight;
    }
  }
  queue.clear();
}

bool BatchExporter::send(Exporter& exporter, const ExportBatch& b, const ExportPolicy& policy,
                         bool final) {
  ExportResult res = ExportResult::kRetryableFailure;
  double wait = policy.retry_backoff_s;
  for (uint32_t attempt = 0; attempt <= policy.max_retries; ++attempt) {
    try {
      res = exporter.export_batch(b);
    } catch (...) {  // an exporter must not take the process down (exit, background thread)
      res = ExportResult::kPermanentFailure;
    }
    if (!final && env_.on_result) env_.on_result(res, b);
    if (res == ExportResult::kSuccess) return true;
    export_failures_.fetch_add(1);
    if (res == ExportResult::kPermanentFailure || attempt == policy.max_retries) break;
    // Shortened only at the final flush: shutdown keeps the retries short.
    env_.sleep_s(final ? wait / 4 : wait);
    wait *= 2;
  }
  return false;
}

void BatchExporter::shutdown_exporter() {
  if (std::shared_ptr<Exporter> ex = exporter()) ex->shutdown();
}

void BatchExporter::add_counters(Counters& c) const {
  c.histogram_rows_exported = hist_rows_exported_.load();
  c.histogram_rows_dropped = hist_rows_dropped_.load();
  c.spans_exported = exported_.load();
  c.spans_dropped_queue = dropped_queue_.load();
  c.spans_dropped_export = dropped_export_.load();
  c.export_failures = export_failures_.load();
}

}  // namespace perfhat::detail
