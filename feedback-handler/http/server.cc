#include "feedback-handler/http/server.h"

#include <httplib.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string_view>

#include "common/feedback.h"
#include "feedback-handler/http/dynamic_routes.h"
#include "feedback-handler/http/http_answers.h"

namespace perfhat::handler {
namespace {

using Request = httplib::Request;
using Response = httplib::Response;
using Reader = httplib::ContentReader;

void tooManyRequests(httplib::Response& res, double retry_after_s, const std::string& message) {
  res.set_header("Retry-After",
                 std::to_string(std::max(1, static_cast<int>(std::ceil(retry_after_s)))));
  setError(res, 429, "resource_exhausted", message);
}

}  // namespace

// Every endpoint, with who may call it and the member function that answers it: requests to
// anything else are refused before their body is read (httplib would otherwise read, and gunzip,
// the body of an unknown POST into memory). A new route is one line here and one member function
// (routes_ingest.cc, routes_read.cc, routes_ops.cc). POST routes read their body through a
// ContentReader; GET routes have none.
const HandlerServer::Route HandlerServer::kRoutes[] = {
    {"POST", "/v1/traces", RouteAccess::kWrite, false, &HandlerServer::postTraces},
    {"POST", "/v1/aggregates", RouteAccess::kWrite, false, &HandlerServer::postAggregates},
    {"POST", "/v1/feedback:batchGet", RouteAccess::kRead, false, &HandlerServer::postBatchGet},
    {"GET", "/v1/feedback", RouteAccess::kRead, false, nullptr, &HandlerServer::getFeedback},
    {"GET", "/v1/changes", RouteAccess::kRead, false, nullptr, &HandlerServer::getChanges},
    {"GET", "/v1/export", RouteAccess::kRead, false, nullptr, &HandlerServer::getExport},
    // Answered by dynamic_routes.cc (registered after this table's routes).
    {"GET", "/v1/dynamic", RouteAccess::kRead, false, nullptr, nullptr},
    {"GET", "/v1/dynamic/graph", RouteAccess::kRead, false, nullptr, nullptr},
    {"POST", "/v1/budget", RouteAccess::kWrite, false, &HandlerServer::postBudget},
    {"GET", "/v1/budget", RouteAccess::kRead, false, nullptr, &HandlerServer::getBudget},
    {"POST", "/v1/sync", RouteAccess::kWrite, true, &HandlerServer::postSync},
    {"GET", "/healthz", RouteAccess::kOpen, false, nullptr, &HandlerServer::getHealthz},
    {"GET", "/metrics", RouteAccess::kOpen, false, nullptr, &HandlerServer::getMetrics},
};

const HandlerServer::Route* HandlerServer::findRoute(const httplib::Request& req) {
  const std::string_view method = req.method == "HEAD" ? "GET" : std::string_view(req.method);
  for (const Route& r : kRoutes) {
    if (r.method == method && r.path == req.path) return &r;
  }
  return nullptr;
}

bool HandlerServer::refuse(const httplib::Request& req, httplib::Response& res) {
  // Runs for Expect: 100-continue (before the client sends its body) and again before routing.
  if (RequestState* st = currentRequest()) {
    if (st->admitted) return false;
    st->admitted = true;
  }
  const Route* route = findRoute(req);
  if (!route) {
    setError(res, 404, "not_found", "no such endpoint: " + req.method + " " + req.path);
    return true;
  }
  if (route->access == RouteAccess::kOpen) return false;
  double retry = 0;
  std::string client = req.remote_addr;  // without tokens, a client is its address
  if (auth_.enabled()) {
    // Guessing is limited per address before the guess is even looked at.
    if (!auth_failures_.wouldAllow(req.remote_addr, &retry)) {
      tooManyRequests(res, retry, "too many failed authentication attempts; retry later");
      return true;
    }
    const Access access = route->access == RouteAccess::kWrite ? Access::kWrite : Access::kRead;
    const AuthResult a = auth_.check(req.get_header_value("Authorization"), access, &client);
    if (a == AuthResult::kMissing || a == AuthResult::kInvalid) {
      auth_failures_.allow(req.remote_addr);
      res.set_header("WWW-Authenticate", "Bearer");
      setError(res, 401, "unauthenticated",
               a == AuthResult::kMissing ? "bearer token required" : "invalid token");
      return true;
    }
    if (a == AuthResult::kForbidden) {
      setError(res, 403, "permission_denied", "token is not allowed to write");
      return true;
    }
  }
  // Authenticated from here on: a body refused below may be drained (bounded) so that the
  // client, which may send it whole before reading, gets the answer.
  if (RequestState* st = currentRequest()) {
    const uint64_t announced = req.get_header_value<uint64_t>("Content-Length");
    st->drain_bytes = announced == 0 ? options_.max_body_bytes
                      : announced <= 4 * static_cast<uint64_t>(options_.max_body_bytes)
                          ? static_cast<size_t>(announced)
                          : 0;
  }
  if (!limiter_.allow(client, &retry)) {
    tooManyRequests(res, retry, "rate limit exceeded; retry later");
    return true;
  }
  if (route->calls_upstreams && !sync_limiter_.allow("sync", &retry)) {
    tooManyRequests(res, retry, "sync requested too often; retry later");
    return true;
  }
  if (req.get_header_value<uint64_t>("Content-Length") > options_.max_body_bytes) {
    setError(res, 413, "payload_too_large",
             "body exceeds " + std::to_string(options_.max_body_bytes) + " bytes");
    return true;
  }
  return false;
}

HandlerServer::HandlerServer(Store& store, ServerOptions options, Syncer* syncer)
    : store_(store),
      options_(std::move(options)),
      syncer_(syncer),
      auth_(options_.tokens, options_.read_tokens),
      limiter_(options_.rate_limit),
      auth_failures_(options_.auth_failures),
      sync_limiter_(options_.sync_rate),
      ingest_(std::make_unique<IngestPipeline>(store, options_.ingest)) {
  FrontOptions front = options_.front;
  // Chunked bodies carry framing: allow it on top of the body limit (1 % + 64 KiB).
  front.max_body_wire_bytes = options_.max_body_bytes + options_.max_body_bytes / 100 + (64u << 10);
  svr_ = std::make_unique<HttpFront>(front);
  svr_->set_payload_max_length(options_.max_body_bytes);
  // The syncer's commits wake long-polls too; the hook is removed before this server goes.
  if (syncer_) syncer_->setOnCommit([this] { changes_.notify(); });
  // So do ingest's writes to the aggregates (each checkpoint, with write-behind).
  ingest_->setOnCheckpoint([this] { changes_.notify(); });
  routes();
}

HandlerServer::~HandlerServer() {
  if (syncer_) syncer_->setOnCommit(nullptr);
  ingest_->setOnCheckpoint(nullptr);  // its final checkpoint runs after changes_ is gone
}

int HandlerServer::bind(const std::string& host, int port) {
  const int bound = svr_->bindTo(host, port);
  if (bound <= 0) {
    throw std::runtime_error("cannot listen on " + host + ":" + std::to_string(port) +
                             " (address in use or not local?)");
  }
  return bound;
}

void HandlerServer::run() { svr_->listen_after_bind(); }
void HandlerServer::stop() {
  changes_.shutdown();  // parked long-polls answer now, not at their timeout
  svr_->stopServing();
}

// Store failures → 503, bad input → 400.
void HandlerServer::guarded(httplib::Response& res, const std::function<void()>& answer) {
  try {
    answer();
  } catch (const StoreError& e) {
    setError(res, 503, "unavailable", std::string("storage unavailable: ") + e.what());
  } catch (const std::invalid_argument& e) {
    setError(res, 400, "invalid_argument", e.what());
  } catch (const FeedbackFormatError& e) {
    setError(res, 400, "invalid_argument", e.what());
  }
}

void HandlerServer::routes() {
  httplib::Server& s = *svr_;
  // Every error response gets the JSON error shape, including httplib's own (404, 413, 400).
  s.set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
        // "Handled" also for answers that have their JSON already: httplib then sets their
        // Content-Length (refusals of Expect: 100-continue are written without it otherwise).
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Handled;
        if (const RequestState* st = currentRequest(); st && st->timed_out) {
          res.status = 408;  // httplib says 400 when the headers stopped coming
        }
        std::string msg = res.status == 404   ? "no such endpoint: " + req.method + " " + req.path
                          : res.status == 408 ? "request not received in time"
                          : res.status == 413 ? "request body too large"
                                              : "request rejected";
        setError(res, res.status, defaultCode(res.status), msg);
        return httplib::Server::HandlerResponse::Handled;
      }));
  s.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, const std::exception_ptr& ep) {
        std::string msg = "internal error";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          msg = e.what();
        } catch (...) {
        }
        setError(res, 500, "internal", msg);
      });
  s.set_logger([this](const httplib::Request&, const httplib::Response& res) {
    metrics_.request(res.status);
  });

  // Admission (route, auth, limits, size) before anything of the body is read; with
  // Expect: 100-continue, before the client is even told to send it.
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    return refuse(req, res) ? httplib::Server::HandlerResponse::Handled
                            : httplib::Server::HandlerResponse::Unhandled;
  });
  s.set_expect_100_continue_handler([this](const httplib::Request& req, httplib::Response& res) {
    return refuse(req, res) ? res.status : 100;
  });

  for (const Route& r : kRoutes) {
    const std::string path(r.path);
    if (!r.with_body && !r.without_body) continue;  // a module registers it below
    if (r.with_body) {
      s.Post(path, [this, fn = r.with_body](const Request& req, Response& res, const Reader& body) {
        guarded(res, [&] { (this->*fn)(req, res, body); });
      });
    } else {
      s.Get(path, [this, fn = r.without_body](const Request& req, Response& res) {
        guarded(res, [&] { (this->*fn)(req, res); });
      });
    }
  }
  registerDynamicRoutes(s, store_, [this](httplib::Response& res) { flushed(res); });
}

bool HandlerServer::readBody(const httplib::Request& rq, httplib::Response& rs,
                             const httplib::ContentReader& reader, size_t limit,
                             std::string& body) {
  RequestState* st = currentRequest();
  // Neither Content-Length nor Transfer-Encoding: no body (httplib would read until EOF).
  if (st && !st->has_body) return true;
  if (const size_t announced = rq.get_header_value<uint64_t>("Content-Length");
      announced > 0 && announced <= limit) {
    body.reserve(announced);  // gzip bodies grow past it; plain ones are read in one piece
  }
  bool too_big = false;
  bool read_ok = reader([&](const char* data, size_t len) {
    if (body.size() + len > limit) {
      too_big = true;
      return false;
    }
    body.append(data, len);
    return true;
  });
  if (too_big) {
    setError(rs, 413, "payload_too_large",
             "decoded body exceeds " + std::to_string(limit) + " bytes");
    return false;
  }
  if (!read_ok) {
    if ((st && st->wire_limit) || rs.status == 413) {
      setError(rs, 413, "payload_too_large",
               "body exceeds " + std::to_string(options_.max_body_bytes) + " bytes");
    } else if (st && st->timed_out) {
      setError(rs, 408, "deadline_exceeded", "request body not received in time");
    } else {
      setError(rs, 400, "invalid_argument", "could not read body (bad gzip?)");
    }
    return false;
  }
  if (st) st->body_consumed = true;
  return true;
}

void HandlerServer::flushed(httplib::Response& res) {
  if (!ingest_->flush()) {
    res.set_header("X-Perfhat-Unflushed",
                   "checkpoint failing: recently acknowledged data is not readable yet");
  }
}
void HandlerServer::ageHeader(httplib::Response& res) {
  if (!syncer_) return;
  double age = syncer_->dataAgeSeconds();
  res.set_header("X-Perfhat-Data-Age-Seconds", age < 0 ? "-1" : std::to_string(std::lround(age)));
}

}  // namespace perfhat::handler
