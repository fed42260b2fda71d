// The connection layer under the handler's routes: cpp-httplib's Server with its per-connection
// loop replaced (process_and_close_socket is virtual), so that hostile or slow clients stay
// bounded and cannot take the server from others (issue #19):
//   - every connection gets a thread at once (ElasticTaskQueue grows on demand, reaps idle ones);
//   - connections are admitted against a total and a per-peer cap; beyond them the client gets a
//     503 JSON error and the connection is closed, without reading its request;
//   - a request's line and headers must arrive within `header_timeout` of its first byte and its
//     body within `body_timeout` of the headers, however slowly the bytes drip; a connection
//     idles at most `keep_alive_idle` between requests;
//   - a response must make progress every `write_timeout` and be sent in full within
//     `send_grace` plus its size at `min_send_bytes_per_second` (slowly reading clients);
//   - header bytes and body bytes on the wire are capped (chunked bodies included);
//   - a connection whose request body was not read to the end (refused before reading it) is
//     closed after the response, with a short bounded drain so the client sees the answer;
//   - stop() wakes every waiting connection at once.
// Route handlers reach the state of the request they serve through currentRequest().
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/thread_annotations.h"
#include "feedback-handler/ingest/pipeline.h"  // MetricSample

namespace perfhat::handler {

struct FrontOptions {
  size_t min_threads = 8;                 // connection threads kept ready
  size_t max_connections = 512;           // open connections in total; more → 503 and close
  size_t max_connections_per_peer = 256;  // per client IP address; 0 = no per-peer cap
  std::chrono::milliseconds header_timeout{10000};  // request line + headers, from first byte
  std::chrono::milliseconds body_timeout{60000};    // whole request body, from end of headers
  std::chrono::milliseconds keep_alive_idle{5000};  // idle between requests on one connection
  std::chrono::milliseconds write_timeout{10000};   // response sending without progress
  // A response must be sent within `send_grace` plus its size at `min_send_bytes_per_second`, so
  // a client that reads a byte now and then cannot keep a connection thread indefinitely.
  std::chrono::milliseconds send_grace{30000};
  size_t min_send_bytes_per_second = 16u << 10;
  std::chrono::milliseconds idle_thread_timeout{30000};  // an idle thread above min exits
  size_t keep_alive_max_requests = 1000;
  size_t max_header_bytes = 64u << 10;  // request line + headers
  // Body bytes read on the wire, chunk framing included (HandlerServer derives it from
  // ServerOptions::max_body_bytes).
  size_t max_body_wire_bytes = 17u << 20;
  std::chrono::milliseconds linger{1000};  // draining an unread body before close, at most…
  size_t linger_bytes = 256u << 10;        // …this much (RequestState::drain_bytes: more)
  int listen_backlog = 1024;
};

// What the connection layer knows about the request being served on this thread.
struct RequestState {
  std::string peer;            // client IP address
  bool has_body = false;       // Content-Length > 0, or chunked
  bool body_consumed = false;  // a handler read the body to its end
  bool close = false;          // close the connection after the response
  bool admitted = false;       // the route's admission checks ran (Expect: 100-continue)
  // A client that passed authentication may finish sending a body we refused (so that it reads
  // our answer instead of a reset): up to this many bytes are drained before closing. Others
  // get a short bounded drain only (FrontOptions::linger_bytes).
  size_t drain_bytes = 0;
  bool timed_out = false;       // a read deadline passed
  bool send_timed_out = false;  // the response was not taken in time: the connection is reset
  bool wire_limit = false;      // the body exceeded max_body_wire_bytes on the wire
  bool header_limit = false;    // the request line and headers exceeded max_header_bytes
  bool answered = false;        // a response (or part of one) was written
};
// The state of the request this thread serves; nullptr outside HttpFront's connections.
RequestState* currentRequest();

class HttpFront : public httplib::Server {
 public:
  explicit HttpFront(FrontOptions options);
  ~HttpFront() override;
  // Binds; port 0 picks a free port. Returns the port, or -1.
  int bindTo(const std::string& host, int port);
  // Stops accepting and wakes every connection waiting for input (then Server::stop()).
  void stopServing();
  const FrontOptions& options() const { return options_; }
  std::vector<MetricSample> samples() const;

 private:
  bool process_and_close_socket(socket_t sock) override;
  void answerHeadersTooLarge(httplib::Stream& strm) const;
  bool admit(const std::string& peer) EXCLUDES(mu_);
  void release(const std::string& peer) EXCLUDES(mu_);
  void refuse(socket_t sock);

  const FrontOptions options_;
  int stop_fd_ = -1;  // eventfd: readable once stopping
  std::atomic<bool> stopping_{false};
  mutable Mutex mu_;
  size_t open_ GUARDED_BY(mu_) = 0;
  std::unordered_map<std::string, size_t> per_peer_ GUARDED_BY(mu_);
  std::atomic<uint64_t> refused_{0}, timed_out_{0}, send_timed_out_{0}, accepted_{0};
};

}  // namespace perfhat::handler
