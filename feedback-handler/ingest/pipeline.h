// The ingest path behind POST /v1/traces: aggregate on the request's thread (with the recent-span
// index for cross-request call sites), then a durable group commit, written behind on SQLite (see
// group_commit.h). `IngestOptions` is the one place its tunables live.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "feedback-handler/ingest/aggregate_rows.h"
#include "feedback-handler/ingest/aggregator.h"
#include "feedback-handler/ingest/group_commit.h"
#include "feedback-handler/ingest/intake_limits.h"
#include "feedback-handler/ingest/intake_log.h"
#include "feedback-handler/ingest/span_index.h"
#include "feedback-handler/store/store.h"

namespace perfhat::handler {

struct IngestOptions {
  GroupCommitOptions commit;    // batching of durable commits
  SpanIndexOptions span_index;  // cross-request call-site linking
};

// One Prometheus sample (counter or gauge) for /metrics.
struct MetricSample {
  std::string name, help, type;
  double value = 0;
};

// How a request body was encoded (the intake log's format tag, for the replay).
enum class BodyFormat : int { kProtobuf = 1, kJson = 2, kAggregateRows = 3 };

class IngestPipeline {
 public:
  // Replays the requests a crash left in the store's intake log (acknowledged, not yet
  // aggregated) before returning, so a restarted handler serves them.
  IngestPipeline(Store& store, IngestOptions options = {});

  // Aggregates `request` and returns once its data is durable (or throws StoreError). The stats
  // are those of aggregate(); nothing is written when the request had no identifiable span.
  // Spans outside the intake limits (intake_limits.h: times outside the retention window, numbers
  // and names out of range) are removed from `request` first and counted in request.rejected,
  // with the reason in request.rejection_reason.
  // `body` is the request as received (after gzip), logged for write-behind; without it the
  // batch is written through.
  IngestStats ingest(otlp::ExportRequest& request, std::string_view body = {},
                     BodyFormat format = BodyFormat::kProtobuf);

  // POST /v1/aggregates: `body` (docs/aggregate-export.md) decoded and checked first (throws
  // AggregateRowsError, nothing written), then durable as ingest() makes spans durable. Times
  // are checked against the store's retention window (intake_limits.h).
  AggregateRowsStats ingestRows(std::string_view body);

  // The times the store accepts now (intake_limits.h).
  TimeBounds acceptedTimes() const;

  // Returns once every acknowledged request is readable from the store (reads call it first);
  // false when checkpoints are failing (see GroupCommitter::flush).
  bool flush() { return committer_.flush(); }
  // Called after each write to the aggregates (the server wakes /v1/changes long-polls).
  void setOnCheckpoint(std::function<void()> hook) { committer_.setOnCheckpoint(std::move(hook)); }
  // Requests found in the intake log at startup and replayed / skipped as undecodable.
  struct Replay {
    uint64_t replayed = 0;
    uint64_t undecodable = 0;
  };
  Replay replayed() const { return replay_; }
  // Damaged intake-log records skipped at startup (IntakeLog::Damage).
  IntakeLog::Damage intakeDamage() const { return log_ ? log_->damage() : IntakeLog::Damage{}; }

  std::vector<MetricSample> samples() const;

 private:
  void replayIntake(Store& store);

  Store& store_;
  SpanIndex recent_;
  Replay replay_;
  std::unique_ptr<IntakeLog> log_;  // null: write-through (PostgreSQL, in-memory store)
  GroupCommitter committer_;
};

}  // namespace perfhat::handler
