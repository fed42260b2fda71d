#include "server/feedback/http_source.h"

#include <stdexcept>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "common/json_parse.h"

namespace perfhat::feedback {
namespace {

using nlohmann::json;

// Classifies a failed or non-2xx exchange.
template <typename R>
bool classify(const httplib::Result& res, const std::string& what, R& out) {
  if (!res) {
    out.status = FetchStatus::Unreachable;
    // httplib's names are terse ("Connection", "Read"): say what they mean for a handler.
    out.error = what + ": handler unreachable (" + httplib::to_string(res.error()) + ")";
    return false;
  }
  int s = res->status;
  if (s >= 200 && s < 300) return true;
  std::string detail;
  json body = parseJson(res->body).value;
  if (body.is_object() && body.contains("error") && body["error"].is_object()) {
    detail = body["error"].value("message", "");
  }
  if (detail.empty()) detail = res->body.substr(0, 200);
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
}

std::unique_ptr<httplib::Client> HttpSource::makeClient() const {
  auto c = std::make_unique<httplib::Client>(host_port_);
  c->set_connection_timeout(std::chrono::milliseconds(options_.connect_timeout_ms));
  c->set_read_timeout(std::chrono::milliseconds(options_.read_timeout_ms));
  c->set_write_timeout(std::chrono::milliseconds(options_.read_timeout_ms));
  c->set_keep_alive(true);
  if (!options_.token.empty()) c->set_bearer_token_auth(options_.token);
#ifdef CPPHTTPLIB_ZLIB_SUPPORT
  c->set_decompress(options_.gzip);
#endif
  return c;
}

HttpSource::~HttpSource() = default;

FetchResult HttpSource::batchGet(const std::vector<std::string>& keys) {
  FetchResult r;
  BatchGetRequest req;
  req.keys = keys;
  std::string body = serialize(req);
  httplib::Headers headers;
  if (options_.gzip) headers.emplace("Accept-Encoding", "gzip");
  std::lock_guard lock(mu_);
  auto res = client_->Post(prefix_ + "/v1/feedback:batchGet", headers, body, "application/json");
  if (!classify(res, "batchGet", r)) return r;
  try {
    r.response = parseBatchGetResponse(res->body);
  } catch (const std::exception& e) {
    r.status = FetchStatus::BadResponse;
    r.error = std::string("batchGet: malformed response: ") + e.what();
  }
  return r;
}

namespace {

ChangesResult changesFrom(const httplib::Result& res) {
  ChangesResult r;
  if (!classify(res, "changes", r)) return r;
  try {
    ChangesResult parsed = parseChangesResponse(res->body);
    parsed.status = FetchStatus::Ok;
    parsed.waited = res->has_header("X-Perfhat-Wait-Ms");
    return parsed;
  } catch (const std::exception& e) {
    r.status = FetchStatus::BadResponse;
    r.error = std::string("changes: malformed response: ") + e.what();
  }
  return r;
}

}  // namespace

ChangesResult HttpSource::changes(const std::string& cursor) {
  std::lock_guard lock(mu_);
  return changesFrom(client_->Get(prefix_ + "/v1/changes?since=" + encodeQuery(cursor)));
}

ChangesResult HttpSource::waitChanges(const std::string& cursor, int wait_ms) {
  if (wait_ms <= 0) return changes(cursor);
  std::lock_guard lock(watch_mu_);
  // The handler answers within wait_ms (it caps it lower if need be); allow the usual read
  // timeout on top for the answer itself.
  watch_client_->set_read_timeout(std::chrono::milliseconds(wait_ms + options_.read_timeout_ms));
  return changesFrom(watch_client_->Get(prefix_ + "/v1/changes?since=" + encodeQuery(cursor) +
                                        "&wait_ms=" + std::to_string(wait_ms)));
}

void HttpSource::cancelWait() {
  // httplib's stop() is the thread-safe way to abort a request in flight: it shuts the socket
  // down, and the blocked Get returns an error at once.
  watch_client_->stop();
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
