// Client of a feedback handler's read API (DESIGN §5): `POST /v1/feedback:batchGet` and
// `GET /v1/changes?since=`, with a bearer token and bounded timeouts so a slow or dead handler
// never stalls analysis for long.
#pragma once

#include <memory>
#include <string>

#include "server/feedback/source.h"

namespace httplib {
class Client;
struct Request;
}  // namespace httplib

#include "common/thread_annotations.h"

namespace perfhat::feedback {

struct HttpOptions {
  std::string token;  // bearer token ("" = none; local handlers need none)
  int connect_timeout_ms = 1000;
  int read_timeout_ms = 5000;  // per read: a handler that drip-feeds never trips it alone
  bool gzip = true;            // accept gzip-compressed responses
  // The whole exchange (connect, headers, body) of one request; a long-poll gets its wait on
  // top. A handler that answers slowly or drip-feeds is cut off here.
  int total_timeout_ms = 15'000;
  // Response bodies, after decompression (a gzip bomb stops here). A batchGet for 10,000 keys
  // with call sites and loops is a few MB.
  size_t max_response_bytes = 64u << 20;
  // One dynamic-metrics read (a file's functions are read one by one on the analysis worker, so
  // a slow handler must give up much sooner than a batchGet does).
  int dynamic_timeout_ms = 2'000;
  size_t dynamic_neighbours = 20;  // callers / callees asked per function (the hover's list)
};

class HttpSource : public FeedbackSource {
 public:
  // `url` is "http://host:port" with an optional path prefix ("http://h:1/perfhat").
  // Throws std::invalid_argument for a URL that is not http(s)://host[:port][/prefix].
  HttpSource(const std::string& url, HttpOptions options);
  ~HttpSource() override;

  FetchResult batchGet(const std::vector<std::string>& keys) override;
  ChangesResult changes(const std::string& cursor) override;
  // GET /v1/changes?since=C&wait_ms=N on its own connection, so a parked long-poll never
  // holds up batchGet; `waited` is set when the handler answers with X-Perfhat-Wait-Ms.
  ChangesResult waitChanges(const std::string& cursor, int wait_ms) override;
  bool canWait() const override { return true; }
  // GET /v1/dynamic?key=K&limit=N (bounded by dynamic_timeout_ms) and GET /v1/dynamic/graph?
  // format=dot&key=K&depth=D (5 × that), on a connection of their own; a 404 "no such endpoint"
  // (an older handler) is `unsupported`.
  DynamicResult dynamicMetrics(const std::string& key) override;
  DynamicResult dynamicGraph(const std::string& key, int depth) override;
  // GET /v1/budget?service=S on the dynamic reads' connection (bounded alike); 404 "no such
  // endpoint" is `unsupported`, another 404 is `none`.
  BudgetResult budgetStatus(const std::string& service) override;
  void cancelWait() override;
  void cancelFetch() override;
  std::string describe() const override { return "handler " + url_; }

  struct Exchange;  // one request's outcome (http_source.cc)

 private:
  std::unique_ptr<httplib::Client> makeClient() const;
  // One request with the body capped at max_response_bytes and the exchange at `total_ms`.
  Exchange send(httplib::Client& client, httplib::Request req, int total_ms) const;

  std::string url_;
  std::string prefix_;  // path prefix, no trailing '/'
  HttpOptions options_;
  Mutex mu_;  // httplib::Client is not safe for concurrent requests
  std::unique_ptr<httplib::Client> client_ PT_GUARDED_BY(mu_);
  std::string host_port_;
  // The dynamic-metrics reads, on their own connection: they run on the analysis worker and
  // must never wait behind a batchGet a slow handler holds.
  Mutex dynamic_mu_;
  std::unique_ptr<httplib::Client> dynamic_client_ PT_GUARDED_BY(dynamic_mu_);
  Mutex watch_mu_;  // the long-poll connection, one request at a time
  std::unique_ptr<httplib::Client> watch_client_ PT_GUARDED_BY(watch_mu_);
};

// Parses a `GET /v1/changes` body: {"cursor": "...", "keys": ["k", ...]} (also accepts
// "changes"/"items" arrays of {"key": ...} objects and "reset": true). Throws
// FeedbackFormatError on malformed input.
ChangesResult parseChangesResponse(std::string_view body);

}  // namespace perfhat::feedback
