#include "server/feedback/http_source.h"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <stdexcept>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "common/json_parse.h"

namespace perfhat::feedback {

using nlohmann::json;

// What came back from one request, with the body read through our bounds.
struct HttpSource::Exchange {
  httplib::Error error = httplib::Error::Success;
  int status = 0;
  std::string body;
  bool waited = false;     // X-Perfhat-Wait-Ms: the handler honoured a long-poll
  bool too_large = false;  // the body passed max_response_bytes
  bool timed_out = false;  // the exchange passed its total time
  int total_ms = 0;
};

namespace {

// Calls `on_expiry` from its own thread if not destroyed within `budget`. httplib's timeouts are
// per read, so a handler that sends a byte every few seconds would hold a request forever;
// Client::stop() (thread-safe) shuts the socket down and the request fails at once.
class Deadline {
 public:
  Deadline(std::chrono::milliseconds budget, std::function<void()> on_expiry)
      : thread_([this, budget, f = std::move(on_expiry)] {
          MutexLock lock(mu_);
          const auto deadline = std::chrono::steady_clock::now() + budget;
          while (!done_) {
            if (cv_.waitUntil(lock, deadline) == std::cv_status::timeout) break;
          }
          if (done_) return;
          expired_ = true;
          lock.unlock();
          f();
        }) {}
  ~Deadline() {
    {
      MutexLock lock(mu_);
      done_ = true;
    }
    cv_.notifyAll();
    thread_.join();
  }
  bool expired() {
    MutexLock lock(mu_);
    return expired_;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  bool done_ GUARDED_BY(mu_) = false;
  bool expired_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

// Classifies a failed or non-2xx exchange.
template <typename R>
bool classify(const HttpSource::Exchange& ex, const std::string& what, size_t max_bytes, R& out) {
  if (ex.timed_out) {
    out.status = FetchStatus::Unreachable;
    out.error = what + ": handler did not answer within " + std::to_string(ex.total_ms) +
                " ms (slow or drip-feeding)";
    return false;
  }
  if (ex.too_large) {
    out.status = FetchStatus::BadResponse;
    out.error = what + ": response larger than " + std::to_string(max_bytes >> 20) +
                " MiB (decompressed); refused";
    return false;
  }
  if (ex.error != httplib::Error::Success) {
    out.status = FetchStatus::Unreachable;
    // httplib's names are terse ("Connection", "Read"): say what they mean for a handler.
    out.error = what + ": handler unreachable (" + httplib::to_string(ex.error) + ")";
    return false;
  }
  int s = ex.status;
  if (s >= 200 && s < 300) return true;
  std::string detail;
  json body = parseJson(ex.body).value;
  if (body.is_object() && body.contains("error") && body["error"].is_object()) {
    const json& m = body["error"]["message"];
    if (m.is_string()) detail = m.get<std::string>().substr(0, 200);
  }
  if (detail.empty()) detail = ex.body.substr(0, 200);
  out.error = what + ": HTTP " + std::to_string(s) + (detail.empty() ? "" : " — " + detail);
  if (s == 401 || s == 403) {
    out.status = FetchStatus::Unauthorized;
  } else if (s >= 500 || s == 429) {
    out.status = FetchStatus::ServerError;
  } else {
    out.status = FetchStatus::BadResponse;
  }
  return false;
}

std::string encodeQuery(std::string_view v) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : v) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace

HttpSource::HttpSource(const std::string& url, HttpOptions options)
    : url_(url), options_(std::move(options)) {
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos)
    throw std::invalid_argument("handler URL needs http://: " + url);
  std::string scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") {
    throw std::invalid_argument("handler URL scheme must be http or https: " + url);
  }
  size_t path_start = url.find('/', scheme_end + 3);
  std::string host_port =
      url.substr(0, path_start == std::string::npos ? std::string::npos : path_start);
  if (host_port.size() <= scheme_end + 3)
    throw std::invalid_argument("handler URL has no host: " + url);
  if (path_start != std::string::npos) {
    prefix_ = url.substr(path_start);
    while (!prefix_.empty() && prefix_.back() == '/') prefix_.pop_back();
  }
  host_port_ = host_port;
  client_ = makeClient();
  if (!client_->is_valid()) throw std::invalid_argument("unsupported handler URL: " + url);
  watch_client_ = makeClient();
  dynamic_client_ = makeClient();
}

std::unique_ptr<httplib::Client> HttpSource::makeClient() const {
  auto c = std::make_unique<httplib::Client>(host_port_);
  c->set_connection_timeout(std::chrono::milliseconds(options_.connect_timeout_ms));
  c->set_read_timeout(std::chrono::milliseconds(options_.read_timeout_ms));
  // A request goes out as header and body writes; with Nagle's algorithm the second waits for
  // the handler's delayed ACK (~40 ms on Linux) on every batchGet.
  c->set_tcp_nodelay(true);
  c->set_write_timeout(std::chrono::milliseconds(options_.read_timeout_ms));
  c->set_keep_alive(true);
  if (!options_.token.empty()) c->set_bearer_token_auth(options_.token);
#ifdef CPPHTTPLIB_ZLIB_SUPPORT
  c->set_decompress(options_.gzip);
#endif
  return c;
}

HttpSource::~HttpSource() = default;

HttpSource::Exchange HttpSource::send(httplib::Client& client, httplib::Request req,
                                      int total_ms) const {
  Exchange ex;
  ex.total_ms = total_ms;
  const size_t limit = options_.max_response_bytes;
  req.response_handler = [&ex](const httplib::Response& r) {
    ex.status = r.status;
    ex.waited = r.has_header("X-Perfhat-Wait-Ms");
    return true;
  };
  // Receives the body after decompression, so the cap holds for a gzip bomb too.
  req.content_receiver = [&ex, limit](const char* data, size_t n, uint64_t, uint64_t) {
    if (ex.body.size() + n > limit) {
      ex.too_large = true;
      return false;
    }
    ex.body.append(data, n);
    return true;
  };
  httplib::Result res = [&] {
    Deadline deadline(std::chrono::milliseconds(total_ms), [&client] { client.stop(); });
    httplib::Result r = client.send(req);
    ex.timed_out = deadline.expired();
    return r;
  }();
  if (!res) {
    ex.error = res.error();
  } else {
    ex.status = res->status;
    ex.waited = ex.waited || res->has_header("X-Perfhat-Wait-Ms");
  }
  return ex;
}

FetchResult HttpSource::batchGet(const std::vector<std::string>& keys) {
  FetchResult r;
  BatchGetRequest req;
  req.keys = keys;
  httplib::Request http;
  http.method = "POST";
  http.path = prefix_ + "/v1/feedback:batchGet";
  http.body = serialize(req);
  http.set_header("Content-Type", "application/json");
  if (options_.gzip) http.set_header("Accept-Encoding", "gzip");
  MutexLock lock(mu_);
  Exchange ex = send(*client_, std::move(http), options_.total_timeout_ms);
  if (!classify(ex, "batchGet", options_.max_response_bytes, r)) return r;
  // Depth-limited: a deeply nested body must not reach code that copies values recursively.
  JsonParse parsed = parseJson(ex.body);
  if (!parsed.ok()) {
    r.status = FetchStatus::BadResponse;
    r.error = "batchGet: malformed response: body is " + parsed.error;
    return r;
  }
  try {
    r.response = parsed.value.get<BatchGetResponse>();
  } catch (const std::exception& e) {
    r.status = FetchStatus::BadResponse;
    r.error = std::string("batchGet: malformed response: ") + e.what();
  }
  return r;
}

namespace {

ChangesResult changesFrom(const HttpSource::Exchange& ex, size_t max_bytes) {
  ChangesResult r;
  if (!classify(ex, "changes", max_bytes, r)) return r;
  try {
    ChangesResult parsed = parseChangesResponse(ex.body);
    parsed.status = FetchStatus::Ok;
    parsed.waited = ex.waited;
    return parsed;
  } catch (const std::exception& e) {
    r.status = FetchStatus::BadResponse;
    r.error = std::string("changes: malformed response: ") + e.what();
  }
  return r;
}

httplib::Request getRequest(std::string path) {
  httplib::Request req;
  req.method = "GET";
  req.path = std::move(path);
  return req;
}

}  // namespace

ChangesResult HttpSource::changes(const std::string& cursor) {
  MutexLock lock(mu_);
  return changesFrom(
      send(*client_, getRequest(prefix_ + "/v1/changes?since=" + encodeQuery(cursor)),
           options_.total_timeout_ms),
      options_.max_response_bytes);
}

ChangesResult HttpSource::waitChanges(const std::string& cursor, int wait_ms) {
  if (wait_ms <= 0) return changes(cursor);
  MutexLock lock(watch_mu_);
  // The handler answers within wait_ms (it caps it lower if need be); allow the usual read
  // timeout on top for the answer itself.
  watch_client_->set_read_timeout(std::chrono::milliseconds(wait_ms + options_.read_timeout_ms));
  return changesFrom(send(*watch_client_,
                          getRequest(prefix_ + "/v1/changes?since=" + encodeQuery(cursor) +
                                     "&wait_ms=" + std::to_string(wait_ms)),
                          wait_ms + options_.total_timeout_ms),
                     options_.max_response_bytes);
}

// Not under watch_mu_ (or mu_ below): the request to abort holds it. The clients are created by
// the constructor and never replaced, and httplib's stop() is safe to call concurrently.
void HttpSource::cancelWait() NO_THREAD_SAFETY_ANALYSIS {
  // httplib's stop() is the thread-safe way to abort a request in flight: it shuts the socket
  // down, and the blocked Get returns an error at once.
  watch_client_->stop();
}

void HttpSource::cancelFetch() NO_THREAD_SAFETY_ANALYSIS {
  client_->stop();
  dynamic_client_->stop();
}

ChangesResult parseChangesResponse(std::string_view body) {
  JsonParse parsed = parseJson(body);
  if (!parsed.ok()) throw FeedbackFormatError("changes response is " + parsed.error);
  const json& j = parsed.value;
  if (!j.is_object()) throw FeedbackFormatError("changes response must be an object");
  ChangesResult r;
  if (auto c = j.find("cursor"); c != j.end()) {
    if (c->is_string())
      r.cursor = c->get<std::string>();
    else if (c->is_number_integer())
      r.cursor = std::to_string(c->get<int64_t>());
    else if (!c->is_null())
      throw FeedbackFormatError("changes: \"cursor\" must be a string");
  }
  for (const char* flag : {"reset", "all"}) {
    if (auto f = j.find(flag); f != j.end() && f->is_boolean() && f->get<bool>()) r.all = true;
  }
  for (const char* list : {"keys", "changes", "items"}) {
    auto it = j.find(list);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_array())
      throw FeedbackFormatError(std::string("changes: \"") + list + "\" must be an array");
    for (const auto& e : *it) {
      if (e.is_string()) {
        r.keys.push_back(e.get<std::string>());
      } else if (e.is_object() && e.contains("key") && e["key"].is_string()) {
        r.keys.push_back(e["key"].get<std::string>());
      } else {
        throw FeedbackFormatError(std::string("changes: bad entry in \"") + list + "\"");
      }
    }
  }
  return r;
}

}  // namespace perfhat::feedback

namespace perfhat::feedback {
namespace {

// 404 from a handler that has the route means "no such key"; from one without it, "no such
// endpoint" (or a non-JSON page from something else): the dynamic reads are unsupported there.
bool missingRoute(const HttpSource::Exchange& ex) {
  if (ex.status != 404) return false;
  JsonParse parsed = parseJson(ex.body);
  if (!parsed.ok() || !parsed.value.is_object()) return true;
  const json& e = parsed.value.value("error", json());
  const json m = e.is_object() ? e.value("message", json()) : json();
  return !m.is_string() || m.get<std::string>().rfind("no such endpoint", 0) == 0;
}

}  // namespace

DynamicResult HttpSource::dynamicMetrics(const std::string& key) {
  DynamicResult r;
  Exchange ex;
  {
    MutexLock lock(dynamic_mu_);
    ex = send(*dynamic_client_,
              getRequest(prefix_ + "/v1/dynamic?key=" + encodeQuery(key) +
                         "&limit=" + std::to_string(options_.dynamic_neighbours)),
              options_.dynamic_timeout_ms);
  }
  if (missingRoute(ex)) {
    r.unsupported = true;
    return r;
  }
  if (ex.status == 404) return r;  // the handler has no probe of this key
  if (!classify(ex, "dynamic", options_.max_response_bytes, r)) return r;
  try {
    r.metrics = parseDynamicMetrics(ex.body);
  } catch (const std::exception& e) {
    r.status = FetchStatus::BadResponse;
    r.error = std::string("dynamic: malformed response: ") + e.what();
  }
  return r;
}

DynamicResult HttpSource::dynamicGraph(const std::string& key, int depth) {
  DynamicResult r;
  Exchange ex;
  {
    MutexLock lock(dynamic_mu_);
    ex = send(*dynamic_client_,
              getRequest(prefix_ + "/v1/dynamic/graph?format=dot&key=" + encodeQuery(key) +
                         "&depth=" + std::to_string(depth)),
              5 * options_.dynamic_timeout_ms);
  }
  if (missingRoute(ex)) {
    r.unsupported = true;
    return r;
  }
  if (!classify(ex, "dynamic graph", options_.max_response_bytes, r)) return r;
  r.dot = std::move(ex.body);
  return r;
}

BudgetResult HttpSource::budgetStatus(const std::string& service) {
  BudgetResult r;
  Exchange ex;
  {
    MutexLock lock(dynamic_mu_);
    ex = send(*dynamic_client_, getRequest(prefix_ + "/v1/budget?service=" + encodeQuery(service)),
              options_.dynamic_timeout_ms);
  }
  if (missingRoute(ex)) {
    r.unsupported = true;
    return r;
  }
  if (ex.status == 404) {
    r.none = true;
    return r;
  }
  if (!classify(ex, "budget", options_.max_response_bytes, r)) return r;
  r.body = std::move(ex.body);
  return r;
}

}  // namespace perfhat::feedback
