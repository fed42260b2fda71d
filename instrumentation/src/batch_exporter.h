// The export pipeline, what OpenTelemetry C++ calls a batch span processor: a bounded queue of
// recorded spans, the flush policy (every export interval, or early when a thread's span ring
// fills), batches of batch_size with retries and backoff, the count of what was lost (told to
// the receiver with the next batch), and the final flush at shutdown. The destination is an
// `Exporter` (perfhat/exporter.hpp, the strategy: OTLP, in-memory, a test's fake); what goes in
// the batches comes from an `ExportSource` (the Engine: its threads' rings and aggregate rows).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "perfhat/exporter.hpp"
#include "perfhat/perfhat.hpp"
#include "span_record.h"
#include "thread_annotations.h"

namespace perfhat::detail {

// How much leaves together, how often, and how hard a batch is retried (from Config).
struct ExportPolicy {
  uint32_t batch_size = 2048;
  uint32_t queue_capacity = 65536;
  uint32_t max_retries = 3;
  double retry_backoff_s = 0.2;  // first backoff; doubles each retry, a quarter at the final flush
  double interval_s = 5;
  static ExportPolicy from(const Config& cfg);
};

// One recorded span waiting for export: the raw record (it becomes SpanData one batch at a time)
// and its thread.
struct QueuedSpan {
  SpanRecord record;
  uint64_t tid = 0;
};

// The bounded queue a source drains its spans into.
class SpanQueue {
 public:
  // False when full: the span stays the source's (the engine folds it into the aggregate rows,
  // so it is counted, not lost).
  bool offer(const SpanRecord& r, uint64_t tid) {
    if (spans_.size() >= capacity_) return false;
    spans_.push_back({r, tid});
    return true;
  }
  size_t size() const { return spans_.size(); }

 private:
  friend class BatchExporter;
  // A vector, not a deque: a deque node holds one QueuedSpan, i.e. one allocation per span.
  // Every export empties it; it keeps its capacity (at most queue_capacity entries).
  std::vector<QueuedSpan> spans_;
  size_t capacity_ = 0;
};

// What the batches carry, as the engine has it. Both calls come from the exporting thread with
// the exporter's pipeline lock held; the source takes its own locks.
class ExportSource {
 public:
  virtual ~ExportSource() = default;
  // Drains the spans recorded since the last export into `queue` and puts the interval's
  // aggregate rows (resource, aggregates, sites, histograms) into `rows`. Both are null when no
  // exporter is configured: the spans are then discarded and no rows are made.
  virtual void collect(SpanQueue* queue, ExportBatch* rows) = 0;
  // `in[0..n)` as a batch's SpanData. Every field is assigned: `out` is reused from the previous
  // batch, so its strings keep their capacity.
  virtual void fill(const QueuedSpan* in, SpanData* out, size_t n) = 0;
};

class BatchExporter {
 public:
  // Time and waiting, injectable for tests: `now_s` any monotonic seconds, `sleep_s` the
  // backoff between retries, `on_result` sees each export's result (the engine re-registers its
  // exit-time flush after a new kind of result; not called at the final flush).
  struct Environment {
    std::function<double()> now_s;
    std::function<void(double)> sleep_s;
    std::function<void(ExportResult, const ExportBatch&)> on_result;
  };
  explicit BatchExporter(Environment env);

  // A new destination and policy (nullptr: spans are discarded). The export clock restarts.
  void configure(std::shared_ptr<Exporter> exporter, const ExportPolicy& policy)
      PERFHAT_EXCLUDES(config_mu_);
  std::shared_ptr<Exporter> exporter() PERFHAT_EXCLUDES(config_mu_);

  // Flush policy. A recording thread whose span ring is half full asks for an export before the
  // interval ends (lock-free: the probe's path).
  void request_early_export() { early_.store(true, std::memory_order_relaxed); }
  // When the next export is due by the interval (the background thread sleeps until then).
  double next_due_s() PERFHAT_EXCLUDES(config_mu_);
  // Exports if asked early or the interval has passed; returns whether it did.
  bool export_if_due(ExportSource& source) PERFHAT_EXCLUDES(mu_, config_mu_);

  // Everything pending now: the interval's rows first, alone, then the queued spans in batches.
  // `final` (shutdown, exit): retries wait a quarter of the backoff.
  void export_pending(ExportSource& source, bool final) PERFHAT_EXCLUDES(mu_, config_mu_);
  // The destination's own shutdown (after the final export_pending).
  void shutdown_exporter() PERFHAT_EXCLUDES(config_mu_);

  // spans_exported, spans_dropped_queue, spans_dropped_export, export_failures and the
  // histogram rows' counts.
  void add_counters(Counters& c) const;

 private:
  // Sends one batch with retries; false if it was lost. Never throws.
  bool send(Exporter& exporter, const ExportBatch& b, const ExportPolicy& policy, bool final);
  void send_rows(Exporter& exporter, ExportBatch&& rows, const ExportPolicy& policy, bool final)
      PERFHAT_REQUIRES(mu_);
  void send_spans(ExportSource& source, Exporter& exporter, const ExportPolicy& policy, bool final)
      PERFHAT_REQUIRES(mu_);

  const Environment env_;

  Mutex config_mu_;  // leaf: held only to read or replace these
  std::shared_ptr<Exporter> exporter_ PERFHAT_GUARDED_BY(config_mu_);
  ExportPolicy policy_ PERFHAT_GUARDED_BY(config_mu_);
  double last_export_s_ PERFHAT_GUARDED_BY(config_mu_) = 0;

  // The pipeline (the background thread, flush() and shutdown take turns); held while sending.
  Mutex mu_;
  SpanQueue queue_ PERFHAT_GUARDED_BY(mu_);
  // The batch being sent. Its spans keep their strings' capacity from batch to batch (no
  // per-span allocation); a shorter batch parks its tail in spare_spans_ rather than freeing it
  // (malloc was a tenth of the export thread's time, issue #5).
  ExportBatch batch_ PERFHAT_GUARDED_BY(mu_);
  std::vector<SpanData> spare_spans_ PERFHAT_GUARDED_BY(mu_);
  DroppedReport unreported_ PERFHAT_GUARDED_BY(mu_);  // lost, not yet told the receiver

  std::atomic<bool> early_{false};
  std::atomic<uint64_t> exported_{0}, dropped_queue_{0}, dropped_export_{0}, export_failures_{0},
      hist_rows_exported_{0}, hist_rows_dropped_{0};
};

}  // namespace perfhat::detail
