// The handler's REST API (DESIGN §5) over cpp-httplib: OTLP/HTTP ingest and the read API.
//
//   POST /v1/traces             OTLP/HTTP, application/json or application/x-protobuf, gzip ok
//   POST /v1/feedback:batchGet  {keys, range?, baseline?} → BatchGetResponse (common/feedback.h)
//   GET  /v1/feedback?key=K     one key (404 when no data); optional from=, to= (RFC 3339)
//   GET  /v1/changes?since=C    {"cursor":"…","keys":[…]}
//   GET  /v1/export?since=C     internal bulk export with sketches (local handlers pull it)
//   POST /v1/sync               local mode: pull every upstream now (write access, rate limited)
//   GET  /healthz, GET /metrics liveness (no auth); Prometheus text (no auth: counters only)
// Errors are {"error":{"code","message"}} with 400/401/403/404/408/413/415/429/503.
//
// Every request is admitted before any of its body is read or inflated (in this order, refuse()):
// known route, failed-authentication limit per peer address, token, request rate per client,
// announced size. A refused request's body is never read; its connection is closed after the
// answer. Bodies are then read with a limit on the wire and after gunzip. The connection layer
// (http_front.h) bounds slow and idle clients and the number of connections.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "feedback-handler/http/auth.h"
#include "feedback-handler/http/change_notifier.h"
#include "feedback-handler/http/http_front.h"
#include "feedback-handler/http/metrics.h"
#include "feedback-handler/http/rate_limiter.h"
#include "feedback-handler/ingest/pipeline.h"
#include "feedback-handler/store/store.h"
#include "feedback-handler/sync/syncer.h"

namespace perfhat::handler {

struct ServerOptions {
  std::string mode = "deployed";  // or "local"
  std::string version = "0.0.0";
  std::vector<std::string> tokens;       // read + write
  std::vector<std::string> read_tokens;  // read only (403 on ingest)
  size_t max_body_bytes = 16u << 20;     // on the wire (compressed); more → 413
  size_t max_decoded_bytes = 64u << 20;  // after gunzip (guards against gzip bombs); more → 413
  size_t max_batch_keys = 100000;
  RateLimitOptions rate_limit;  // per client: its token when auth is on, else its peer address
  // Failed authentication attempts per peer address (checked before the token); beyond → 429.
  RateLimitOptions auth_failures{.rate_per_s = 0.2, .burst = 20};
  // POST /v1/sync makes the local handler call its upstreams: all clients together, beyond → 429.
  RateLimitOptions sync_rate{.rate_per_s = 0.2, .burst = 5};
  size_t max_change_waiters = 64;  // parked GET /v1/changes?wait_ms= requests; more → 429
  FrontOptions front;              // connections: threads, caps, deadlines (http_front.h)
  IngestOptions ingest;            // group commit and cross-request call sites (ingest/pipeline.h)
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
  // The route table (server.cc): who may call each endpoint and the member that answers it.
  enum class RouteAccess { kOpen, kRead, kWrite };
  using BodyRoute = void (HandlerServer::*)(const httplib::Request&, httplib::Response&,
                                            const httplib::ContentReader&);
  using PlainRoute = void (HandlerServer::*)(const httplib::Request&, httplib::Response&);
  struct Route {
    std::string_view method, path;
    RouteAccess access;
    bool calls_upstreams = false;       // rate limited for all clients together
    BodyRoute with_body = nullptr;      // POST routes
    PlainRoute without_body = nullptr;  // GET routes
  };
  static const Route kRoutes[];
  static const Route* findRoute(const httplib::Request& req);

  // Registers the error and admission hooks and every route of kRoutes.
  void routes();
  // Runs `answer`; store failures answer 503, bad input 400.
  static void guarded(httplib::Response& res, const std::function<void()>& answer);
  // Reads a request's body (gzip decoded by httplib) up to `limit` decoded bytes; false when it
  // answered with an error instead. Admission has passed, and the wire bytes are capped by the
  // connection layer (chunked bodies included).
  bool readBody(const httplib::Request& req, httplib::Response& res,
                const httplib::ContentReader& reader, size_t limit, std::string& body);
  // Every read first waits for acknowledged ingest to reach the aggregates (write-behind). When
  // that fails (disk full), it answers from what is stored and says so.
  void flushed(httplib::Response& res);
  // Local mode: how old the pulled data is.
  void ageHeader(httplib::Response& res);

  // ingest (routes_ingest.cc)
  void postTraces(const httplib::Request& req, httplib::Response& res,
                  const httplib::ContentReader& reader);
  void postAggregates(const httplib::Request& req, httplib::Response& res,
                      const httplib::ContentReader& reader);
  // read API (routes_read.cc)
  void postBatchGet(const httplib::Request& req, httplib::Response& res,
                    const httplib::ContentReader& reader);
  void getFeedback(const httplib::Request& req, httplib::Response& res);
  // libperfhat's collection-budget status (routes_budget.cc, issue #22).
  void postBudget(const httplib::Request& req, httplib::Response& res,
                  const httplib::ContentReader& reader);
  void getBudget(const httplib::Request& req, httplib::Response& res);
  void getChanges(const httplib::Request& req, httplib::Response& res);
  void getExport(const httplib::Request& req, httplib::Response& res);
  // operations (routes_ops.cc)
  void postSync(const httplib::Request& req, httplib::Response& res,
                const httplib::ContentReader& reader);
  void getHealthz(const httplib::Request& req, httplib::Response& res);
  void getMetrics(const httplib::Request& req, httplib::Response& res);

  // The admission checks of the request (route, auth, limits, size); true when it answered.
  bool refuse(const httplib::Request& req, httplib::Response& res);
  Store& store_;
  ServerOptions options_;
  Syncer* syncer_;
  ChangeNotifier changes_;  // commits (ingest, sync) wake `GET /v1/changes?wait_ms=` here
  TokenAuth auth_;
  RateLimiter limiter_;
  RateLimiter auth_failures_;  // by peer address
  RateLimiter sync_limiter_;   // one bucket for all clients
  Metrics metrics_;
  std::unique_ptr<IngestPipeline> ingest_;
  std::unique_ptr<HttpFront> svr_;
};

}  // namespace perfhat::handler
