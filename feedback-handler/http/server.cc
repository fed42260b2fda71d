#include "feedback-handler/http/server.h"

#include <httplib.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "feedback-handler/http/change_notifier.h"
#include "feedback-handler/http/dynamic_routes.h"
#include "feedback-handler/http/feedback_writer.h"
#include "feedback-handler/ingest/aggregator.h"
#include "feedback-handler/ingest/intake_limits.h"
#include "feedback-handler/otlp/otlp.h"
#include "feedback-handler/sync/export_json.h"
#include "feedback-handler/util/parallel.h"
#include "feedback-handler/util/rfc3339.h"

namespace perfhat::handler {
namespace {

using nlohmann::json;

constexpr const char* kJson = "application/json";

void setError(httplib::Response& res, int status, const std::string& code,
              const std::string& message) {
  res.status = status;
  res.set_content(json{{"error", {{"code", code}, {"message", message}}}}.dump(
                      -1, ' ', false, json::error_handler_t::replace),
                  kJson);
}

std::string defaultCode(int status) {
  switch (status) {
    case 400:
      return "invalid_argument";
    case 401:
      return "unauthenticated";
    case 403:
      return "permission_denied";
    case 404:
      return "not_found";
    case 408:
      return "deadline_exceeded";
    case 413:
      return "payload_too_large";
    case 415:
      return "unsupported_media_type";
    case 429:
      return "resource_exhausted";
    case 503:
      return "unavailable";
    default:
      return status >= 500 ? "internal" : "error";
  }
}

bool parseU64(const std::string& s, uint64_t& out) {
  if (s.empty() || s.size() > 20) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

// ExportTraceServiceResponse { ExportTracePartialSuccess partial_success = 1
//   { int64 rejected_spans = 1; string error_message = 2; } }
std::string protoPartialSuccess(uint64_t rejected, const std::string& message) {
  auto varint = [](std::string& o, uint64_t v) {
    while (v >= 0x80) {
      o.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    o.push_back(static_cast<char>(v));
  };
  std::string inner;
  inner.push_back(0x08);
  varint(inner, rejected);
  inner.push_back(0x12);
  varint(inner, message.size());
  inner += message;
  std::string out;
  out.push_back(0x0a);
  varint(out, inner.size());
  return out + inner;
}

// Keys per thread from which the store and the writer split a batchGet (their chunk minimum).
constexpr size_t kLargeReadKeysPerThread = 1024;

// Sends a document made of consecutive pieces without joining them: a 10,000-key batchGet
// answer is ~7 MB, and joining it (then copying it into the response) cost ~10 % of the call.
void sendPieces(httplib::Response& res, std::vector<std::string> pieces, const char* type) {
  size_t total = 0;
  for (const std::string& p : pieces) total += p.size();
  auto owned = std::make_shared<std::vector<std::string>>(std::move(pieces));
  res.set_content_provider(
      total, type, [owned](size_t offset, size_t length, httplib::DataSink& sink) {
        for (const std::string& p : *owned) {  // a handful of pieces: find the one at `offset`
          if (offset >= p.size()) {
            offset -= p.size();
            continue;
          }
          return sink.write(p.data() + offset, std::min(length, p.size() - offset));
        }
        return false;
      });
}

// Every endpoint, with who may call it: requests to anything else are refused before their body
// is read (httplib would otherwise read, and gunzip, the body of an unknown POST into memory).
enum class RouteAccess { kOpen, kRead, kWrite };
struct Route {
  std::string_view method, path;
  RouteAccess access;
  bool calls_upstreams = false;  // rate limited for all clients together
};
constexpr Route kRoutes[] = {
    {"POST", "/v1/traces", RouteAccess::kWrite},
    {"POST", "/v1/aggregates", RouteAccess::kWrite},
    {"POST", "/v1/feedback:batchGet", RouteAccess::kRead},
    {"GET", "/v1/feedback", RouteAccess::kRead},
    {"GET", "/v1/changes", RouteAccess::kRead},
    {"GET", "/v1/export", RouteAccess::kRead},
    {"GET", "/v1/dynamic", RouteAccess::kRead},
    {"GET", "/v1/dynamic/graph", RouteAccess::kRead},
    {"POST", "/v1/sync", RouteAccess::kWrite, true},
    {"GET", "/healthz", RouteAccess::kOpen},
    {"GET", "/metrics", RouteAccess::kOpen},
};

const Route* findRoute(const httplib::Request& req) {
  const std::string_view method = req.method == "HEAD" ? "GET" : std::string_view(req.method);
  for (const Route& r : kRoutes) {
    if (r.method == method && r.path == req.path) return &r;
  }
  return nullptr;
}

void tooManyRequests(httplib::Response& res, double retry_after_s, const std::string& message) {
  res.set_header("Retry-After",
                 std::to_string(std::max(1, static_cast<int>(std::ceil(retry_after_s)))));
  setError(res, 429, "resource_exhausted", message);
}

}  // namespace

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

  // Store failures → 503, bad input → 400.
  auto guarded = [](auto fn) {
    return [fn](const httplib::Request& req, httplib::Response& res) {
      try {
        fn(req, res);
      } catch (const StoreError& e) {
        setError(res, 503, "unavailable", std::string("storage unavailable: ") + e.what());
      } catch (const std::invalid_argument& e) {
        setError(res, 400, "invalid_argument", e.what());
      } catch (const FeedbackFormatError& e) {
        setError(res, 400, "invalid_argument", e.what());
      }
    };
  };

  // Reads a request's body (gzip decoded by httplib) up to `limit` decoded bytes; false when it
  // answered with an error instead. Admission has passed, and the wire bytes are capped by the
  // connection layer (chunked bodies included).
  auto readBody = [this](const httplib::Request& rq, httplib::Response& rs,
                         const httplib::ContentReader& reader, size_t limit, std::string& body) {
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
  };

  // ---- ingest -----------------------------------------------------------------------------
  s.Post("/v1/traces",
         [this, guarded, readBody](const httplib::Request& req, httplib::Response& res,
                                   const httplib::ContentReader& reader) {
           guarded([&](const httplib::Request& rq, httplib::Response& rs) {
             std::string body;
             if (!readBody(rq, rs, reader, options_.max_decoded_bytes, body)) return;
             metrics_.bytesReceived(body.size());
             std::string ct = rq.get_header_value("Content-Type");
             const bool proto = ct.rfind("application/x-protobuf", 0) == 0 ||
                                ct.rfind("application/protobuf", 0) == 0;
             const bool js = ct.rfind("application/json", 0) == 0;
             if (!proto && !js) {
               return setError(rs, 415, "unsupported_media_type",
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
               return setError(rs, 400, "invalid_argument", e.what());
             }
             auto t0 = std::chrono::steady_clock::now();
             // Durable (group commit; the body goes to the intake log with write-behind) before we
             // acknowledge. Long-polls wake when the data reaches the aggregates (setOnCheckpoint).
             IngestStats st =
                 ingest_->ingest(request, body, proto ? BodyFormat::kProtobuf : BodyFormat::kJson);
             metrics_.storeWrite(
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
             uint64_t rejected = request.rejected + st.skipped;
             std::string reason = request.rejection_reason;
             if (reason.empty() && st.skipped) reason = "span without name or code.* attributes";
             metrics_.spansIngested(st.spans);
             metrics_.spansRejected(rejected);
             rs.status = 200;
             if (proto) {
               rs.set_content(rejected ? protoPartialSuccess(rejected, reason) : std::string(),
                              "application/x-protobuf");
             } else {
               json out = json::object();
               if (rejected) {
                 out["partialSuccess"] = {{"rejectedSpans", std::to_string(rejected)},
                                          {"errorMessage", reason}};
               }
               rs.set_content(out.dump(), kJson);
             }
           })(req, res);
         });

  // libperfhat's aggregate export (docs/aggregate-export.md): rows of in-process histograms,
  // merged like spans and as durable before the answer.
  s.Post("/v1/aggregates", [this, guarded, readBody](const httplib::Request& req,
                                                     httplib::Response& res,
                                                     const httplib::ContentReader& reader) {
    guarded([&](const httplib::Request& rq, httplib::Response& rs) {
      std::string body;
      if (!readBody(rq, rs, reader, options_.max_decoded_bytes, body)) return;
      metrics_.bytesReceived(body.size());
      if (rq.get_header_value("Content-Type").rfind("application/json", 0) != 0) {
        return setError(rs, 415, "unsupported_media_type", "Content-Type must be application/json");
      }
      AggregateRowsStats st;
      auto t0 = std::chrono::steady_clock::now();
      try {
        st = ingest_->ingestRows(body);
      } catch (const AggregateRowsError& e) {
        metrics_.aggregateRows(0, 1);
        return setError(rs, 400, "invalid_argument", e.what());
      }
      metrics_.storeWrite(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      metrics_.aggregateRows(st.rows, st.skipped);
      metrics_.exporterLostCalls(st.dropped_calls);
      json out = json::object();
      if (st.skipped) {
        out["partialSuccess"] = {{"rejectedRows", std::to_string(st.skipped)},
                                 {"errorMessage", "row whose site has no name or code.* identity"}};
      }
      rs.status = 200;
      rs.set_content(out.dump(), kJson);
    })(req, res);
  });

  // ---- read API ---------------------------------------------------------------------------
  // Every read first waits for acknowledged ingest to reach the aggregates (write-behind). When
  // that fails (disk full), it answers from what is stored and says so.
  auto flushed = [this](httplib::Response& res) {
    if (!ingest_->flush()) {
      res.set_header("X-Perfhat-Unflushed",
                     "checkpoint failing: recently acknowledged data is not readable yet");
    }
  };
  auto ageHeader = [this](httplib::Response& res) {
    if (!syncer_) return;
    double age = syncer_->dataAgeSeconds();
    res.set_header("X-Perfhat-Data-Age-Seconds", age < 0 ? "-1" : std::to_string(std::lround(age)));
  };

  registerDynamicRoutes(s, store_, flushed);

  s.Post("/v1/feedback:batchGet", [this, guarded, readBody, ageHeader, flushed](
                                      const httplib::Request& req, httplib::Response& res,
                                      const httplib::ContentReader& reader) {
    guarded([&](const httplib::Request& rq, httplib::Response& rs) {
      std::string body;
      if (!readBody(rq, rs, reader, options_.max_decoded_bytes, body)) return;
      // A request large enough to be split (each key is two quotes) gets one team of threads
      // for reading and writing, started now so that their start-up overlaps the parse.
      std::optional<ChunkTeam> team;
      const size_t threads = requestThreads(store_.options().read_threads);
      if (chunkCount(static_cast<size_t>(std::count(body.begin(), body.end(), '"')) / 2,
                     kLargeReadKeysPerThread, threads) > 1) {
        team.emplace(threads);
      }
      BatchGetRequest r = parseBatchGetRequest(body);
      if (r.keys.size() > options_.max_batch_keys) {
        return setError(rs, 413, "payload_too_large",
                        "at most " + std::to_string(options_.max_batch_keys) + " keys per call");
      }
      // No stored key is longer (ingest refuses them), and "missing" would echo it back.
      for (size_t i = 0; i < r.keys.size(); ++i) {
        if (r.keys[i].size() > IntakeLimits::kMaxKeyBytes) {
          return setError(rs, 400, "invalid_argument",
                          "keys[" + std::to_string(i) + "] is longer than " +
                              std::to_string(IntakeLimits::kMaxKeyBytes) + " bytes");
        }
      }
      ageHeader(rs);
      flushed(rs);
      BatchGetResponse answer = store_.batchGet(r, team ? &*team : nullptr);
      sendPieces(rs,
                 team ? writeBatchGetResponsePieces(std::move(answer), *team)
                      : writeBatchGetResponsePieces(answer, store_.options().read_threads),
                 kJson);
    })(req, res);
  });

  s.Get("/v1/feedback",
        guarded([this, ageHeader, flushed](const httplib::Request& req, httplib::Response& res) {
          std::string key = req.get_param_value("key");
          if (key.empty()) return setError(res, 400, "invalid_argument", "missing ?key=");
          if (key.size() > IntakeLimits::kMaxKeyBytes) {
            return setError(
                res, 400, "invalid_argument",
                "key is longer than " + std::to_string(IntakeLimits::kMaxKeyBytes) + " bytes");
          }
          BatchGetRequest r;
          r.keys = {key};
          if (req.has_param("from") || req.has_param("to")) {
            r.range = TimeWindow{req.get_param_value("from"), req.get_param_value("to")};
          }
          flushed(res);
          BatchGetResponse out = store_.batchGet(r);
          if (out.items.empty()) return setError(res, 404, "not_found", "no data for key: " + key);
          ageHeader(res);
          res.set_content(writeFeedbackItem(out.items[0]), kJson);
        }));

  // Long-poll: with wait_ms=N the request parks (bounded count, capped N) until a commit moves
  // the cursor past `since`, so editors refresh about a second after data arrives. The
  // X-Perfhat-Wait-Ms header says the wait was honoured: older handlers ignore wait_ms and
  // answer at once, and clients then fall back to plain polling. `since=` (empty) = from now.
  s.Get(
      "/v1/changes", guarded([this, flushed](const httplib::Request& req, httplib::Response& res) {
        constexpr uint64_t kMaxWaitMs = 30000;  // below common proxy and client idle timeouts
        uint64_t since = 0, limit = 10000, wait_ms = 0;
        const bool from_now = req.has_param("since") && req.get_param_value("since").empty();
        if (req.has_param("since") && !from_now && !parseU64(req.get_param_value("since"), since)) {
          return setError(res, 400, "invalid_argument", "since must be a cursor (integer)");
        }
        if (req.has_param("limit") && (!parseU64(req.get_param_value("limit"), limit) || !limit)) {
          return setError(res, 400, "invalid_argument", "limit must be a positive integer");
        }
        if (req.has_param("wait_ms")) {
          if (!parseU64(req.get_param_value("wait_ms"), wait_ms)) {
            return setError(res, 400, "invalid_argument",
                            "wait_ms must be a non-negative integer (milliseconds)");
          }
          wait_ms = std::min(wait_ms, kMaxWaitMs);
          res.set_header("X-Perfhat-Wait-Ms", std::to_string(wait_ms));
        }
        auto reply = [&res](const ChangesPage& p, bool reset) {
          json out{{"cursor", std::to_string(p.cursor)}, {"keys", p.keys}};
          if (reset) out["reset"] = true;  // the store is older than the client's cursor
          res.set_content(out.dump(-1, ' ', false, json::error_handler_t::replace), kJson);
        };
        if (from_now) return reply(ChangesPage{store_.cursor(), {}}, false);

        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
        // Parked requests hold a connection thread each.
        const size_t max_waiters = std::max<size_t>(1, options_.max_change_waiters);
        for (bool first = true;; first = false) {
          const uint64_t seen = changes_.generation();  // before the read: no lost wake-up
          if (first) flushed(res);                      // later wake-ups come from checkpoints
          ChangesPage p = store_.changes(since, limit);
          if (p.cursor < since) return reply(p, true);
          auto left = std::chrono::ceil<std::chrono::milliseconds>(
              deadline - std::chrono::steady_clock::now());
          if (!p.keys.empty() || p.cursor > since || left.count() <= 0) return reply(p, false);
          switch (changes_.wait(seen, left, max_waiters)) {
            case ChangeNotifier::WaitResult::kChanged:
              continue;  // re-read the store
            case ChangeNotifier::WaitResult::kTooManyWaiters:
              res.set_header("Retry-After", "1");
              return setError(res, 429, "resource_exhausted",
                              "too many waiting change requests; retry, or poll without wait_ms");
            case ChangeNotifier::WaitResult::kTimeout:
            case ChangeNotifier::WaitResult::kShutdown:
              return reply(p, false);
          }
        }
      }));

  s.Get(
      "/v1/export", guarded([this, flushed](const httplib::Request& req, httplib::Response& res) {
        uint64_t since = 0, limit = 20000;
        if (req.has_param("since") && !parseU64(req.get_param_value("since"), since)) {
          return setError(res, 400, "invalid_argument", "since must be a cursor (integer)");
        }
        if (req.has_param("limit") && (!parseU64(req.get_param_value("limit"), limit) || !limit)) {
          return setError(res, 400, "invalid_argument", "limit must be a positive integer");
        }
        flushed(res);
        res.set_content(serializeExport(store_.exportSince(since, limit)), kJson);
      }));

  s.Post("/v1/sync", [this, guarded, readBody](const httplib::Request& req, httplib::Response& res,
                                               const httplib::ContentReader& reader) {
    guarded([&](const httplib::Request& rq, httplib::Response& rs) {
      std::string ignored;  // no parameters; a small body is read so the connection stays usable
      if (!readBody(rq, rs, reader, 64u << 10, ignored)) return;
      if (!syncer_) return setError(rs, 404, "not_found", "sync exists in local mode only");
      json ups = json::array();
      bool all_ok = true;
      for (const auto& st : syncer_->syncNow()) {
        all_ok &= st.ok;
        ups.push_back({{"url", st.url},
                       {"ok", st.ok},
                       {"error", st.last_error},
                       {"cursor", std::to_string(st.cursor)},
                       {"rows_pulled", st.rows_pulled}});
      }
      rs.set_content(json{{"ok", all_ok}, {"upstreams", ups}}.dump(), kJson);
    })(req, res);
  });

  // ---- operations -------------------------------------------------------------------------
  s.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    json out{{"status", "ok"}, {"mode", options_.mode}, {"version", options_.version}};
    try {
      store_.ping();
      out["cursor"] = std::to_string(store_.cursor());
    } catch (const StoreError& e) {
      return setError(res, 503, "unavailable", std::string("storage unavailable: ") + e.what());
    }
    if (syncer_) {
      json ups = json::array();
      for (const auto& st : syncer_->status()) {
        ups.push_back(
            {{"url", st.url},
             {"ok", st.ok},
             {"error", st.last_error},
             {"last_success", st.last_success_ns ? formatRfc3339(st.last_success_ns) : ""},
             {"failures", st.failures}});
      }
      out["upstreams"] = ups;
      out["data_age_s"] = syncer_->dataAgeSeconds();
    }
    res.set_content(out.dump(), kJson);
  });

  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    uint64_t sketches = 0, cursor = 0;
    try {
      sketches = store_.aggregateCount();
      cursor = store_.cursor();
    } catch (const StoreError&) {
    }
    std::vector<MetricSample> samples = ingest_->samples();
    for (MetricSample& m : svr_->samples()) samples.push_back(std::move(m));
    res.set_content(
        metrics_.render(sketches, cursor, syncer_ ? syncer_->dataAgeSeconds() : -1, samples),
        "text/plain; version=0.0.4");
  });
}

}  // namespace perfhat::handler
