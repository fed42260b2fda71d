// The handler's REST API (DESIGN §5) over cpp-httplib: OTLP/HTTP ingest and the read API.
//
//   POST /v1/traces             OTLP/HTTP, application/json or application/x-protobuf, gzip ok
//   POST /v1/feedback:batchGet  {keys, range?, baseline?} → BatchGetResponse (common/feedback.h)
//   GET  /v1/feedback?key=K     one key (404 when no data); optional from=, to= (RFC 3339)
//   GET  /v1/changes?since=C    {"cursor":"…","keys":[…]}
//   GET  /v1/export?since=C     internal bulk export with sketches (local handlers pull it)
//   POST /v1/sync               local mode: pull every upstream now
//   GET  /healthz, GET /metrics liveness (no auth); Prometheus text (no auth: counters only)
// Errors are {"error":{"code","message"}} with 400/401/403/404/413/415/429/503.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "feedback-handler/http/auth.h"
#include "feedback-handler/http/change_notifier.h"
#include "feedback-handler/http/metrics.h"
#include "feedback-handler/http/rate_limiter.h"
#include "feedback-handler/ingest/pipeline.h"
#include "feedback-handler/store/store.h"
#include "feedback-handler/sync/syncer.h"

namespace httplib {
class Server;
}

namespace perfhat::handler {

struct ServerOptions {
  std::string mode = "deployed";  // or "local"
  std::string version = "0.0.0";
  std::vector<std::string> tokens;       // read + write
  std::vector<std::string> read_tokens;  // read only (403 on ingest)
  size_t max_body_bytes = 16u << 20;     // on the wire (compressed); more → 413
  size_t max_decoded_bytes = 64u << 20;  // after gunzip (guards against gzip bombs); more → 413
  size_t max_batch_keys = 100000;
  RateLimitOptions rate_limit;  // per client (token, else peer address)
  int threads = 8;              // keep-alive connections each hold one (A5)
  IngestOptions ingest;         // group commit and cross-request call sites (ingest/pipeline.h)
};

class HandlerServer {
 public:
  // `syncer` (local mode) may be null.
  HandlerServer(Store& store, ServerOptions options, Syncer* syncer = nullptr);
  ~HandlerServer();
  // Binds; port 0 picks a free port. Returns the bound port; throws std::runtime_error.
  int bind(const std::string& host, int port);
  void run();  // serves until stop()
  void stop();
  Metrics& metrics() { return metrics_; }

 private:
  void routes();
  Store& store_;
  ServerOptions options_;
  Syncer* syncer_;
  ChangeNotifier changes_;  // commits (ingest, sync) wake `GET /v1/changes?wait_ms=` here
  TokenAuth auth_;
  RateLimiter limiter_;
  Metrics metrics_;
  std::unique_ptr<IngestPipeline> ingest_;
  std::unique_ptr<httplib::Server> svr_;
};

}  // namespace perfhat::handler
