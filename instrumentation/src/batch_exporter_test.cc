// The batch exporter on its own: a scripted source, a fake exporter and an injected clock and
// sleep (no engine, no thread, no waiting).
#include "batch_exporter.h"

#include <gtest/gtest.h>

#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

namespace perfhat::detail {
namespace {

// Offers `pending` spans (site = 1, 2, …) at the next collect; what the queue refuses is kept
// as `refused`, as the engine folds it into its rows.
struct ScriptedSource : ExportSource {
  std::vector<SpanRecord> pending;
  std::vector<uint32_t> refused;
  bool rows_next = false;  // put one aggregate row into the next collect
  int collects = 0, collects_without_destination = 0;

  void add_spans(int n, double weight = 1) {
    for (int i = 0; i < n; ++i) {
      SpanRecord r;
      r.site = static_cast<uint32_t>(pending.size() + refused.size() + 1);
      r.weight = weight;
      pending.push_back(r);
    }
  }
  void collect(SpanQueue* queue, ExportBatch* rows) override {
    ++collects;
    if (queue == nullptr) ++collects_without_destination;
    for (const SpanRecord& r : pending) {
      if (queue != nullptr && !queue->offer(r, 7)) refused.push_back(r.site);
    }
    pending.clear();
    if (rows != nullptr && rows_next) {
      rows->resource.service_name = "svc";
      rows->aggregates.push_back(AggregateData{});
      rows_next = false;
    }
  }
  void fill(const QueuedSpan* in, SpanData* out, size_t n) override {
    for (size_t k = 0; k < n; ++k) {
      out[k].site = in[k].record.site;
      out[k].thread_id = in[k].tid;
      out[k].weight = in[k].record.weight;
      out[k].name = "site" + std::to_string(in[k].record.site);
    }
  }
};

// Answers each export with the next scripted result (success once the script is used up) and
// keeps what it was given.
struct FakeExporter : Exporter {
  std::deque<ExportResult> script;
  bool throw_next = false;
  std::vector<std::vector<uint32_t>> span_batches;  // sites per span batch, in order
  std::vector<ExportBatch> row_batches;             // batches without spans
  int shutdowns = 0;

  ExportResult export_batch(const ExportBatch& b) override {
    if (throw_next) {
      throw_next = false;
      throw std::runtime_error("exporter bug");
    }
    ExportResult r = ExportResult::kSuccess;
    if (!script.empty()) {
      r = script.front();
      script.pop_front();
    }
    if (r == ExportResult::kSuccess) {
      if (b.spans.empty()) {
        row_batches.push_back(b);
      } else {
        std::vector<uint32_t> sites;
        for (const SpanData& s : b.spans) sites.push_back(s.site);
        span_batches.push_back(sites);
      }
    }
    return r;
  }
  void shutdown() override { ++shutdowns; }
};

struct Harness {
  double now = 100;
  std::vector<double> sleeps;
  std::vector<ExportResult> results;
  BatchExporter exporter{BatchExporter::Environment{
      [this] { return now; }, [this](double s) { sleeps.push_back(s); },
      [this](ExportResult r, const ExportBatch&) { results.push_back(r); }}};
  std::shared_ptr<FakeExporter> fake = std::make_shared<FakeExporter>();
  ScriptedSource source;

  explicit Harness(ExportPolicy p = policy()) { exporter.configure(fake, p); }
  static ExportPolicy policy() {
    ExportPolicy p;
    p.batch_size = 3;
    p.queue_capacity = 100;
    p.max_retries = 2;
    p.retry_backoff_s = 0.5;
    p.interval_s = 5;
    return p;
  }
  Counters counters() const {
    Counters c;
    exporter.add_counters(c);
    return c;
  }
};

TEST(BatchExporter, QueuedSpansLeaveInBatchesOfBatchSizeInTheOrderRecorded) {
  Harness h;
  h.source.add_spans(7);
  h.exporter.export_pending(h.source, false);
  ASSERT_EQ(h.fake->span_batches.size(), 3u);
  EXPECT_EQ(h.fake->span_batches[0], (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(h.fake->span_batches[1], (std::vector<uint32_t>{4, 5, 6}));
  EXPECT_EQ(h.fake->span_batches[2], (std::vector<uint32_t>{7}));
  EXPECT_EQ(h.counters().spans_exported, 7u);
  EXPECT_EQ(h.counters().export_failures, 0u);
  // The queue was emptied: the next export sends nothing again.
  h.exporter.export_pending(h.source, false);
  EXPECT_EQ(h.fake->span_batches.size(), 3u);
}

TEST(BatchExporter, TheIntervalsRowsLeaveFirstAndAlone) {
  Harness h;
  h.source.add_spans(2);
  h.source.rows_next = true;
  h.exporter.export_pending(h.source, false);
  ASSERT_EQ(h.fake->row_batches.size(), 1u);
  EXPECT_EQ(h.fake->row_batches[0].aggregates.size(), 1u);
  EXPECT_EQ(h.fake->row_batches[0].resource.service_name, "svc");
  ASSERT_EQ(h.fake->span_batches.size(), 1u);
  ASSERT_EQ(h.results.size(), 2u);  // rows, then spans: one observed result each
}

TEST(BatchExporter, ASpanThatFindsTheQueueFullStaysWithTheSource) {
  ExportPolicy p = Harness::policy();
  p.queue_capacity = 4;
  Harness h(p);
  h.source.add_spans(6);
  h.exporter.export_pending(h.source, false);
  EXPECT_EQ(h.source.refused, (std::vector<uint32_t>{5, 6}));
  EXPECT_EQ(h.counters().spans_exported, 4u);
}

TEST(BatchExporter, WithoutADestinationTheSourceDiscardsAndNothingIsSent) {
  Harness h;
  h.exporter.configure(nullptr, Harness::policy());
  h.source.add_spans(3);
  h.source.rows_next = true;
  h.exporter.export_pending(h.source, false);
  EXPECT_EQ(h.source.collects_without_destination, 1);
  EXPECT_TRUE(h.source.refused.empty());
  EXPECT_TRUE(h.fake->span_batches.empty());
  EXPECT_TRUE(h.fake->row_batches.empty());
  h.exporter.shutdown_exporter();
  EXPECT_EQ(h.fake->shutdowns, 0);
}

TEST(BatchExporter, ARetryableFailureIsRetriedWithADoublingBackoff) {
  Harness h;
  h.fake->script = {ExportResult::kRetryableFailure, ExportResult::kRetryableFailure};
  h.source.add_spans(1);
  h.exporter.export_pending(h.source, false);
  EXPECT_EQ(h.sleeps, (std::vector<double>{0.5, 1.0}));
  ASSERT_EQ(h.fake->span_batches.size(), 1u);  // the third try got through
  EXPECT_EQ(h.counters().export_failures, 2u);
  EXPECT_EQ(h.counters().spans_exported, 1u);
}

TEST(BatchExporter, TheFinalFlushWaitsAQuarterAndIsNotObserved) {
  Harness h;
  h.fake->script = {ExportResult::kRetryableFailure};
  h.source.add_spans(1);
  h.exporter.export_pending(h.source, true);
  EXPECT_EQ(h.sleeps, (std::vector<double>{0.125}));
  EXPECT_TRUE(h.results.empty());
  EXPECT_EQ(h.counters().spans_exported, 1u);
}

TEST(BatchExporter, ALostBatchIsCountedAndToldWithTheNextRows) {
  Harness h;
  // The first batch fails permanently (no retry); the second gets through.
  h.fake->script = {ExportResult::kPermanentFailure};
  h.source.add_spans(4, /*weight=*/2.5);
  h.exporter.export_pending(h.source, false);
  EXPECT_TRUE(h.sleeps.empty());
  EXPECT_EQ(h.counters().spans_dropped_export, 3u);
  EXPECT_EQ(h.counters().spans_exported, 1u);
  // The next export carries the report even without rows of its own, and only once.
  h.exporter.export_pending(h.source, false);
  ASSERT_EQ(h.fake->row_batches.size(), 1u);
  EXPECT_EQ(h.fake->row_batches[0].dropped.spans, 3u);
  EXPECT_DOUBLE_EQ(h.fake->row_batches[0].dropped.calls, 7.5);
  h.exporter.export_pending(h.source, false);
  EXPECT_EQ(h.fake->row_batches.size(), 1u);
}

TEST(BatchExporter, AnExporterThatThrowsLosesItsBatchNotTheProcess) {
  Harness h;
  h.fake->throw_next = true;
  h.source.add_spans(1);
  EXPECT_NO_THROW(h.exporter.export_pending(h.source, false));
  EXPECT_EQ(h.counters().spans_dropped_export, 1u);
  EXPECT_TRUE(h.sleeps.empty());  // a permanent failure
  ASSERT_EQ(h.results.size(), 1u);
  EXPECT_EQ(h.results[0], ExportResult::kPermanentFailure);
}

TEST(BatchExporter, ExportsWhenTheIntervalHasPassedOrWhenAskedEarly) {
  Harness h;  // configured at now = 100, interval 5
  EXPECT_DOUBLE_EQ(h.exporter.next_due_s(), 105);
  h.now = 104.9;
  EXPECT_FALSE(h.exporter.export_if_due(h.source));
  EXPECT_EQ(h.source.collects, 0);
  h.now = 105;
  EXPECT_TRUE(h.exporter.export_if_due(h.source));
  EXPECT_EQ(h.source.collects, 1);
  EXPECT_DOUBLE_EQ(h.exporter.next_due_s(), 110);
  // A thread's ring filled: the next check exports at once, and the request is used up.
  h.now = 106;
  h.exporter.request_early_export();
  EXPECT_TRUE(h.exporter.export_if_due(h.source));
  EXPECT_FALSE(h.exporter.export_if_due(h.source));
  EXPECT_EQ(h.source.collects, 2);
  EXPECT_DOUBLE_EQ(h.exporter.next_due_s(), 111);
}

TEST(BatchExporter, ConfigureRestartsTheClockAndForgetsAnEarlyRequest) {
  Harness h;
  h.exporter.request_early_export();
  h.now = 200;
  h.exporter.configure(h.fake, Harness::policy());
  EXPECT_FALSE(h.exporter.export_if_due(h.source));
  EXPECT_DOUBLE_EQ(h.exporter.next_due_s(), 205);
}

TEST(BatchExporter, ABatchSizeOfZeroSendsOneSpanAtATime) {
  ExportPolicy p = Harness::policy();
  p.batch_size = 0;
  Harness h(p);
  h.source.add_spans(2);
  h.exporter.export_pending(h.source, false);
  EXPECT_EQ(h.fake->span_batches.size(), 2u);
}

TEST(BatchExporter, ShutdownShutsTheDestination) {
  Harness h;
  h.exporter.shutdown_exporter();
  EXPECT_EQ(h.fake->shutdowns, 1);
  EXPECT_EQ(h.exporter.exporter(), h.fake);
}

}  // namespace
}  // namespace perfhat::detail
