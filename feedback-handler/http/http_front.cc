#include "feedback-handler/http/http_front.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "feedback-handler/http/elastic_task_queue.h"

namespace perfhat::handler {
namespace {

using Clock = std::chrono::steady_clock;

thread_local RequestState* t_request = nullptr;

std::string addressOf(const sockaddr_storage& ss, int* port) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
    if (port) *port = ntohs(in->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof buf);
    if (port) *port = ntohs(in6->sin6_port);
  }
  return buf;
}

std::string peerOf(int sock, int* port = nullptr) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getpeername(sock, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "";
  return addressOf(ss, port);
}

int msUntil(Clock::time_point deadline) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, 1 << 30));
}

// A connection's byte stream with deadlines instead of per-read timeouts: reads fail once the
// current phase's deadline passes or its byte budget is spent, or when the server stops. Bytes
// read ahead stay buffered for the next request on the connection.
class DeadlineStream : public httplib::Stream {
 public:
  DeadlineStream(int sock, int stop_fd, const FrontOptions& o)
      : sock_(sock), stop_fd_(stop_fd), o_(o) {}

  // Waits up to `timeout` for the first byte of a request; false on timeout, close or stop.
  bool waitForRequest(std::chrono::milliseconds timeout) {
    if (off_ < len_) return true;
    const int r = waitReadable(Clock::now() + timeout);
    if (r <= 0) return false;
    char c;
    return ::recv(sock_, &c, 1, MSG_PEEK) > 0;
  }
  void beginHeaders(RequestState* st) {
    state_ = st;
    deadline_ = Clock::now() + o_.header_timeout;
    budget_ = o_.max_header_bytes;
    sending_ = false;
  }
  void beginBody() {
    deadline_ = Clock::now() + o_.body_timeout;
    budget_ = o_.max_body_wire_bytes;
    in_body_ = true;
  }
  void endRequest() {
    state_ = nullptr;
    in_body_ = false;
  }

  bool is_readable() const override { return off_ < len_ || waitReadable(deadline_) > 0; }
  bool is_writable() const override {
    pollfd p{sock_, POLLOUT, 0};
    const int r = ::poll(&p, 1, static_cast<int>(o_.write_timeout.count()));
    return r > 0 && !(p.revents & (POLLERR | POLLHUP | POLLNVAL));
  }

  ssize_t read(char* ptr, size_t size) override {
    if (budget_ == 0) {
      if (state_) (in_body_ ? state_->wire_limit : state_->header_limit) = true;
      return -1;
    }
    size = std::min(size, budget_);
    if (off_ == len_) {
      const int r = waitReadable(deadline_);
      if (r == 0 && state_) state_->timed_out = true;
      if (r <= 0) return -1;
      const ssize_t n = ::recv(sock_, buf_, sizeof buf_, 0);
      if (n <= 0) return n;
      off_ = 0;
      len_ = static_cast<size_t>(n);
    }
    const size_t n = std::min(size, len_ - off_);
    std::memcpy(ptr, buf_ + off_, n);
    off_ += n;
    budget_ -= n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (state_) state_->answered = true;
    if (!sending_) {
      sending_ = true;
      send_start_ = Clock::now();
      sent_ = 0;
    }
    size_t done = 0;
    while (done < size) {
      // The deadline grows with what is to be sent, so a large answer to a client reading at a
      // reasonable rate is never cut, while a client that drips reads loses the connection.
      const auto deadline = sendDeadline(sent_ + size - done);
      const int wait = std::min(msUntil(deadline), static_cast<int>(o_.write_timeout.count()));
      if (wait <= 0) return sendTimedOut();
      pollfd p{sock_, POLLOUT, 0};
      const int r = ::poll(&p, 1, wait);
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) {
        if (wait < o_.write_timeout.count()) continue;  // the total deadline: see above
        return sendTimedOut();
      }
      if (r < 0 || (p.revents & (POLLERR | POLLHUP | POLLNVAL))) return -1;
      const ssize_t n = ::send(sock_, ptr + done, size - done, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) return -1;
      done += static_cast<size_t>(n);
      sent_ += static_cast<size_t>(n);
    }
    return static_cast<ssize_t>(done);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = peerOf(sock_, &port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (getsockname(sock_, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
      ip = addressOf(ss, &port);
    }
  }
  socket_t socket() const override { return sock_; }

 private:
  // >0 readable, 0 deadline passed, <0 stopping or error.
  int waitReadable(Clock::time_point deadline) const {
    for (;;) {
      pollfd p[2] = {{sock_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
      const int r = ::poll(p, 2, msUntil(deadline));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 || p[1].revents) return -1;
      if (r == 0 && Clock::now() < deadline) continue;  // woke early (rounding): wait on
      if (r == 0) return 0;
      return 1;
    }
  }

  ssize_t sendTimedOut() {
    if (state_) state_->send_timed_out = true;
    return -1;
  }
  Clock::time_point sendDeadline(size_t bytes) const {
    const size_t rate = std::max<size_t>(o_.min_send_bytes_per_second, 1);
    const auto at_rate = std::chrono::milliseconds(static_cast<int64_t>(
        std::min<size_t>(bytes / rate * 1000 + bytes % rate * 1000 / rate, size_t{1} << 40)));
    return send_start_ + o_.send_grace + at_rate;
  }

  const int sock_, stop_fd_;
  const FrontOptions& o_;
  bool sending_ = false;  // the current response has begun
  Clock::time_point send_start_{};
  size_t sent_ = 0;  // bytes of the current response sent so far
  RequestState* state_ = nullptr;
  Clock::time_point deadline_ = Clock::now();
  size_t budget_ = 0;
  bool in_body_ = false;
  char buf_[4096];
  size_t off_ = 0, len_ = 0;
};

// Half-closes, then reads and discards what the client is still sending (bounded in bytes and
// time), so that closing does not reset the connection before the client has read our answer.
void lingeringClose(int sock, std::chrono::milliseconds linger, size_t max_bytes) {
  ::shutdown(sock, SHUT_WR);
  const auto deadline = Clock::now() + linger;
  char buf[4096];
  size_t drained = 0;
  while (drained < max_bytes) {
    pollfd p{sock, POLLIN, 0};
    const int r = ::poll(&p, 1, msUntil(deadline));
    if (r <= 0) break;
    const ssize_t n = ::recv(sock, buf, sizeof buf, 0);
    if (n <= 0) break;
    drained += static_cast<size_t>(n);
  }
  ::close(sock);
}

bool announcesBody(const httplib::Request& req) {
  if (req.get_header_value("Transfer-Encoding").find_first_not_of(" ") != std::string::npos) {
    return true;  // chunked (or anything else httplib would read as a body)
  }
  return req.get_header_value<uint64_t>("Content-Length") > 0;
}

}  // namespace

RequestState* currentRequest() { return t_request; }

HttpFront::HttpFront(FrontOptions options) : options_(std::move(options)) {
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  const FrontOptions o = options_;
  new_task_queue = [o] {
    return new ElasticTaskQueue(ElasticTaskQueueOptions{
        .min_threads = o.min_threads,
        // Refusing a connection over the caps needs a thread too.
        .max_threads = o.max_connections + 64,
        .idle_timeout = o.idle_thread_timeout,
    });
  };
  set_keep_alive_max_count(std::max<size_t>(1, options_.keep_alive_max_requests));
  set_keep_alive_timeout(std::max<time_t>(
      1, std::chrono::ceil<std::chrono::seconds>(options_.keep_alive_idle).count()));
  // Remaining bytes of a body that a handler left unread would be parsed as the next request:
  // such connections are closed after the response (which says so).
  set_post_routing_handler([](const httplib::Request&, httplib::Response& res) {
    RequestState* st = currentRequest();
    if (!st) return;
    if (st->has_body && !st->body_consumed) st->close = true;
    if (st->close) {
      res.headers.erase("Keep-Alive");
      res.set_header("Connection", "close");
    }
  });
}

HttpFront::~HttpFront() {
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

int HttpFront::bindTo(const std::string& host, int port) {
  int bound = port == 0 ? bind_to_any_port(host) : (bind_to_port(host, port) ? port : -1);
  // httplib listens with a backlog of 5: bursts of connections would wait for SYN retries.
  if (bound > 0) ::listen(svr_sock_, options_.listen_backlog);
  return bound;
}

void HttpFront::stopServing() {
  stopping_ = true;
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(stop_fd_, &one, sizeof one);
  stop();
}

bool HttpFront::admit(const std::string& peer) {
  MutexLock lock(mu_);
  if (open_ >= options_.max_connections) return false;
  size_t& mine = per_peer_[peer];
  if (options_.max_connections_per_peer && mine >= options_.max_connections_per_peer) {
    if (mine == 0) per_peer_.erase(peer);
    return false;
  }
  ++mine;
  ++open_;
  return true;
}

void HttpFront::release(const std::string& peer) {
  MutexLock lock(mu_);
  --open_;
  auto it = per_peer_.find(peer);
  if (it != per_peer_.end() && --it->second == 0) per_peer_.erase(it);
}

void HttpFront::refuse(socket_t sock) {
  static const std::string kBody =
      R"({"error":{"code":"unavailable","message":"too many connections; retry later"}})";
  static const std::string kResponse =
      "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: "
      "1\r\nConnection: close\r\nContent-Length: " +
      std::to_string(kBody.size()) + "\r\n\r\n" + kBody;
  [[maybe_unused]] ssize_t n = ::send(sock, kResponse.data(), kResponse.size(), MSG_NOSIGNAL);
  // A short drain only: the peer is already over its share of connections.
  lingeringClose(sock, std::chrono::milliseconds(100), 16u << 10);
}

void HttpFront::answerHeadersTooLarge(httplib::Stream& strm) const {
  const std::string body =
      R"({"error":{"code":"request_header_fields_too_large","message":"request line and headers )"
      R"(exceed )" +
      std::to_string(options_.max_header_bytes) + R"( bytes"}})";
  const std::string response =
      "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/json\r\n"
      "Connection: close\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  strm.write(response.data(), response.size());
}

bool HttpFront::process_and_close_socket(socket_t sock) {
  const std::string peer = peerOf(sock);
  if (!admit(peer)) {
    ++refused_;
    refuse(sock);
    return false;
  }
  ++accepted_;
  // Answers go out as header and body writes: without this the body waits for the client's
  // delayed ACK (~40 ms on Linux) whenever the header did not fill a segment.
  const int one = 1;
  ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  DeadlineStream strm(sock, stop_fd_, options_);
  RequestState state;
  bool ok = true, linger = false, abort = false;
  size_t drain_bytes = 0;
  for (size_t left = options_.keep_alive_max_requests; left > 0 && !stopping_; --left) {
    const bool first = left == options_.keep_alive_max_requests;
    if (!strm.waitForRequest(first ? options_.header_timeout : options_.keep_alive_idle)) break;
    state = RequestState{.peer = peer};
    t_request = &state;
    strm.beginHeaders(&state);
    bool client_closes = false;
    ok = process_request(strm, left == 1 || stopping_, client_closes,
                         [&state, &strm](httplib::Request& req) {
                           state.has_body = announcesBody(req);
                           strm.beginBody();
                         });
    // httplib gives up without a word on a request line longer than it reads: say why.
    if (state.header_limit && !state.answered) answerHeadersTooLarge(strm);
    t_request = nullptr;
    strm.endRequest();
    if (state.timed_out) ++timed_out_;
    if (state.send_timed_out) {
      ++send_timed_out_;
      abort = true;
      break;
    }
    if (!ok || client_closes || state.close || state.timed_out || state.wire_limit) {
      linger = ok && state.has_body && !state.body_consumed && !state.timed_out;
      drain_bytes = state.drain_bytes;
      break;
    }
  }
  release(peer);
  if (abort) {
    // A reset drops what the kernel still holds for a client that would not read it; a
    // graceful close would go on sending it at the client's pace.
    const struct linger no_linger { 1, 0 };
    ::setsockopt(sock, SOL_SOCKET, SO_LINGER, &no_linger, sizeof no_linger);
    ::close(sock);
  } else if (linger && drain_bytes > options_.linger_bytes) {
    lingeringClose(sock, options_.body_timeout, drain_bytes);
  } else if (linger) {
    lingeringClose(sock, options_.linger, options_.linger_bytes);
  } else {
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
  }
  return ok;
}

std::vector<MetricSample> HttpFront::samples() const {
  size_t open;
  {
    MutexLock lock(mu_);
    open = open_;
  }
  return {
      {"perfhat_handler_open_connections", "HTTP connections open now.", "gauge",
       static_cast<double>(open)},
      {"perfhat_handler_connections_total", "HTTP connections admitted.", "counter",
       static_cast<double>(accepted_.load())},
      {"perfhat_handler_connections_refused_total",
       "HTTP connections refused with 503 (over the total or per-peer cap).", "counter",
       static_cast<double>(refused_.load())},
      {"perfhat_handler_send_timeouts_total",
       "Responses the client did not take within the send deadline (connection reset).", "counter",
       static_cast<double>(send_timed_out_.load())},
      {"perfhat_handler_request_timeouts_total",
       "Requests whose headers or body did not arrive in time (408, connection closed).", "counter",
       static_cast<double>(timed_out_.load())},
  };
}

}  // namespace perfhat::handler
