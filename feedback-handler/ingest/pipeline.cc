#include "feedback-handler/ingest/pipeline.h"

#include <cstdio>

#include "feedback-handler/otlp/otlp.h"

namespace perfhat::handler {

namespace {

// Write-behind needs a local file to log to: a SQLite store on disk.
std::unique_ptr<IntakeLog> openLog(const Store& store) {
  const std::string& path = store.options().path;
  if (!sql::isSqliteFile(path)) return nullptr;
  return std::make_unique<IntakeLog>(IntakeLog::pathFor(path));
}

}  // namespace

IngestPipeline::IngestPipeline(Store& store, IngestOptions options)
    : store_(store),
      recent_(std::move(options.span_index)),
      log_(openLog(store)),
      committer_(store, options.commit, log_.get()) {
  replayIntake(store);  // before the server takes requests; the committer is idle until then
}

// The log holds the acknowledged requests above the store's intake_upto, whose aggregates were
// never written, so replaying them, in order, through the same decode and aggregation restores
// exactly what was acknowledged. Call-site edges whose parent span was in an already-checkpointed
// request are not rebuilt (the span index lives in memory).
void IngestPipeline::replayIntake(Store& store) {
  if (!log_) return;
  std::vector<IntakeRecord> records = log_->recover(store.meta(GroupCommitter::kIntakeUpto));
  if (records.empty()) {
    log_->clear();  // only records a checkpoint already covered, if any
    return;
  }
  Batch batch;
  // Replayed under the same limits as when they were acknowledged; what the retention has passed
  // by since is left out (purge would remove it).
  const TimeBounds bounds = acceptedTimes();
  for (const IntakeRecord& r : records) {
    try {
      if (r.format == static_cast<int>(BodyFormat::kAggregateRows)) {
        decodeAggregateRows(r.body, batch, &bounds);
      } else {
        otlp::ExportRequest req = r.format == static_cast<int>(BodyFormat::kJson)
                                      ? otlp::decodeJson(r.body)
                                      : otlp::decodeProtobuf(r.body);
        screenSpans(req, bounds);
        aggregate(req, batch, &recent_);
      }
      ++replay_.replayed;
    } catch (const std::exception& e) {
      // It decoded when it was acknowledged and its CRC checks, so this is a bug, not damage.
      ++replay_.undecodable;
      std::fprintf(stderr, "perfhat-handler: intake record %lld not replayed: %s\n",
                   static_cast<long long>(r.id), e.what());
    }
  }
  batch.meta[GroupCommitter::kIntakeUpto] = records.back().id;
  store.write(batch);
  log_->clear();
  std::fprintf(stderr, "perfhat-handler: replayed %llu acknowledged request(s) from %s\n",
               static_cast<unsigned long long>(replay_.replayed), log_->path().c_str());
}

TimeBounds IngestPipeline::acceptedTimes() const {
  return handler::acceptedTimes(store_.now(), store_.options().retention_minutes);
}

IngestStats IngestPipeline::ingest(otlp::ExportRequest& request, std::string_view body,
                                   BodyFormat format) {
  screenSpans(request, acceptedTimes());
  // Aggregated on the committer thread, straight into the batch it writes (see group_commit.h).
  IngestStats st;
  committer_.commit([&](Batch& into) { st = aggregate(request, into, &recent_); }, body,
                    static_cast<int>(format));
  return st;
}

AggregateRowsStats IngestPipeline::ingestRows(std::string_view body) {
  Batch decoded;
  const TimeBounds bounds = acceptedTimes();
  const AggregateRowsStats st = decodeAggregateRows(body, decoded, &bounds);  // throws first
  if (decoded.empty()) return st;
  committer_.commit([&](Batch& into) { into.absorb(std::move(decoded)); }, body,
                    static_cast<int>(BodyFormat::kAggregateRows));
  return st;
}

std::vector<MetricSample> IngestPipeline::samples() const {
  const SpanIndex::Counters s = recent_.counters();
  const GroupCommitter::Counters c = committer_.counters();
  auto d = [](uint64_t v) { return static_cast<double>(v); };
  return {
      {"perfhat_handler_commits_total",
       "Durable ingest transactions that acknowledged requests (group commits).", "counter",
       d(c.commits)},
      {"perfhat_handler_checkpoints_total",
       "Write-behind checkpoints (acknowledged requests merged into the aggregates).", "counter",
       d(c.checkpoints)},
      {"perfhat_handler_checkpoint_failures_total",
       "Failed checkpoints (data kept in memory and in the intake log; retried).", "counter",
       d(c.checkpoint_failures)},
      {"perfhat_handler_unflushed_requests",
       "Acknowledged requests not yet merged into the aggregates.", "gauge", d(c.dirty_requests)},
      {"perfhat_handler_unflushed_rows", "Aggregate rows waiting for the next checkpoint.", "gauge",
       d(c.dirty_rows)},
      {"perfhat_handler_intake_replayed_total",
       "Acknowledged requests replayed from the intake log at startup.", "counter",
       d(replay_.replayed)},
      {"perfhat_handler_intake_damaged_records_total",
       "Damaged intake-log records (or stretches of damaged bytes) skipped at startup.", "counter",
       d(intakeDamage().records)},
      {"perfhat_handler_sketches_repaired_total",
       "Stored sketches read with out-of-range totals (clamped; see the log).", "counter",
       d(DDSketch::repairedBlobs())},
      {"perfhat_handler_committed_batches_total",
       "Ingest requests committed (÷ commits = group size).", "counter", d(c.batches)},
      {"perfhat_handler_span_index_spans", "Recent spans remembered for cross-request call sites.",
       "gauge", d(s.spans)},
      {"perfhat_handler_span_index_waiting",
       "Child spans waiting for a parent from a later request.", "gauge", d(s.waiting)},
      {"perfhat_handler_span_index_linked_total", "Call-site edges linked across export requests.",
       "counter", d(s.linked)},
      {"perfhat_handler_span_index_spans_evicted_total",
       "Recent spans dropped for capacity before their TTL.", "counter", d(s.spans_evicted)},
      {"perfhat_handler_span_index_spans_expired_total", "Recent spans dropped at their TTL.",
       "counter", d(s.spans_expired)},
      {"perfhat_handler_span_index_waiting_evicted_total",
       "Waiting children dropped for capacity (their edge is not recorded).", "counter",
       d(s.waiting_evicted)},
      {"perfhat_handler_span_index_waiting_expired_total",
       "Waiting children whose parent never arrived within the TTL (edge not recorded).", "counter",
       d(s.waiting_expired)},
  };
}

}  // namespace perfhat::handler
