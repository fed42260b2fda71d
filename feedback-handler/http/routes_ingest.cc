// Ingest routes: OTLP/HTTP traces and libperfhat's aggregate rows. Both are durable before
// they are answered.
#include <httplib.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "feedback-handler/http/http_answers.h"
#include "feedback-handler/http/server.h"
#include "feedback-handler/ingest/aggregate_rows.h"
#include "feedback-handler/otlp/otlp.h"

namespace perfhat::handler {

using nlohmann::json;

void HandlerServer::postTraces(const httplib::Request& req, httplib::Response& res,
                               const httplib::ContentReader& reader) {
  std::string body;
  if (!readBody(req, res, reader, options_.max_decoded_bytes, body)) return;
  metrics_.bytesReceived(body.size());
  std::string ct = req.get_header_value("Content-Type");
  const bool proto =
      ct.rfind("application/x-protobuf", 0) == 0 || ct.rfind("application/protobuf", 0) == 0;
  const bool js = ct.rfind("application/json", 0) == 0;
  if (!proto && !js) {
    return setError(res, 415, "unsupported_media_type",
                    "Content-Type must be application/json or application/x-protobuf");
  }
  // Each worker decodes protobuf into its own request object, whose strings and vectors
  // the next request reuses (decode and free were ~12 % of ingest); an unusually large
  // request's storage is released afterwards rather than kept for the worker's lifetime.
  thread_local otlp::ExportRequest recycled;
  struct Release {
    otlp::ExportRequest& r;
    ~Release() {
      if (r.spans.capacity() > 4096) r = otlp::ExportRequest();
    }
  } release{recycled};
  otlp::ExportRequest& request = recycled;
  try {
    if (proto) {
      otlp::decodeProtobuf(body, request);
    } else {
      request = otlp::decodeJson(body);
    }
  } catch (const otlp::OtlpError& e) {
    metrics_.spansRejected(1);
    return setError(res, 400, "invalid_argument", e.what());
  }
  auto t0 = std::chrono::steady_clock::now();
  // Durable (group commit; the body goes to the intake log with write-behind) before we
  // acknowledge. Long-polls wake when the data reaches the aggregates (setOnCheckpoint).
  IngestStats st =
      ingest_->ingest(request, body, proto ? BodyFormat::kProtobuf : BodyFormat::kJson);
  metrics_.storeWrite(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  uint64_t rejected = request.rejected + st.skipped;
  std::string reason = request.rejection_reason;
  if (reason.empty() && st.skipped) reason = "span without name or code.* attributes";
  metrics_.spansIngested(st.spans);
  metrics_.spansRejected(rejected);
  res.status = 200;
  if (proto) {
    res.set_content(rejected ? protoPartialSuccess(rejected, reason) : std::string(),
                    "application/x-protobuf");
  } else {
    json out = json::object();
    if (rejected) {
      out["partialSuccess"] = {{"rejectedSpans", std::to_string(rejected)},
                               {"errorMessage", reason}};
    }
    res.set_content(out.dump(), kJson);
  }
}

// libperfhat's aggregate export (docs/aggregate-export.md): rows of in-process histograms,
// merged like spans and as durable before the answer.
void HandlerServer::postAggregates(const httplib::Request& req, httplib::Response& res,
                                   const httplib::ContentReader& reader) {
  std::string body;
  if (!readBody(req, res, reader, options_.max_decoded_bytes, body)) return;
  metrics_.bytesReceived(body.size());
  if (req.get_header_value("Content-Type").rfind("application/json", 0) != 0) {
    return setError(res, 415, "unsupported_media_type", "Content-Type must be application/json");
  }
  AggregateRowsStats st;
  auto t0 = std::chrono::steady_clock::now();
  try {
    st = ingest_->ingestRows(body);
  } catch (const AggregateRowsError& e) {
    metrics_.aggregateRows(0, 1);
    return setError(res, 400, "invalid_argument", e.what());
  }
  metrics_.storeWrite(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  metrics_.aggregateRows(st.rows, st.skipped);
  metrics_.exporterLostCalls(st.dropped_calls);
  json out = json::object();
  if (st.skipped) {
    out["partialSuccess"] = {{"rejectedRows", std::to_string(st.skipped)},
                             {"errorMessage", "row whose site has no name or code.* identity"}};
  }
  res.status = 200;
  res.set_content(out.dump(), kJson);
}

}  // namespace perfhat::handler
