#include "experiment/dashboard_data.h"

#include <httplib.h>

#include <algorithm>
#include <ctime>
#include <stdexcept>

#include "common/feedback.h"

namespace perfhat::experiment {
namespace {

using json = nlohmann::json;

httplib::Client makeClient(const std::string& url, const std::string& token) {
  httplib::Client c(url);
  c.set_connection_timeout(std::chrono::seconds(5));
  c.set_read_timeout(std::chrono::seconds(60));
  if (!token.empty()) c.set_bearer_token_auth(token);
  return c;
}

std::string describe(const httplib::Result& r, const std::string& what) {
  if (!r) return what + ": no answer (" + httplib::to_string(r.error()) + ")";
  return what + ": HTTP " + std::to_string(r->status) + " " + r->body.substr(0, 300);
}

double ms(double ns) { return ns / 1e6; }

}  // namespace

std::string rfc3339(int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

HandlerReader::HandlerReader(std::string url, std::string token)
    : url_(std::move(url)), token_(std::move(token)) {}

std::string HandlerReader::post(const std::string& path, const std::string& body) {
  httplib::Client c = makeClient(url_, token_);
  auto r = c.Post(path, body, "application/json");
  if (!r || r->status != 200) throw std::runtime_error(describe(r, "POST " + path));
  return r->body;
}

std::vector<std::string> HandlerReader::keys() {
  std::lock_guard lock(mu_);
  httplib::Client c = makeClient(url_, token_);
  for (int page = 0; page < 10000; ++page) {
    auto r = c.Get("/v1/changes?since=" + std::to_string(cursor_));
    if (!r || r->status != 200) throw std::runtime_error(describe(r, "GET /v1/changes"));
    const json j = json::parse(r->body);
    const uint64_t next = std::stoull(j.at("cursor").get<std::string>());
    if (j.value("reset", false)) known_.clear();  // the store is newer than our cursor
    for (const auto& k : j.at("keys")) known_.insert(k.get<std::string>());
    const bool progressed = next > cursor_;
    cursor_ = next;
    if (j.at("keys").empty() || !progressed) break;
  }
  return {known_.begin(), known_.end()};
}

json HandlerReader::functions(int64_t now_s, int64_t minutes) {
  minutes = std::clamp<int64_t>(minutes, 1, kDashboardMaxMinutes);
  const std::vector<std::string> all = keys();
  const TimeWindow window{rfc3339(now_s - minutes * 60), rfc3339(now_s)};
  json rows = json::array();
  for (size_t at = 0; at < all.size(); at += kDashboardKeysPerBatch) {
    BatchGetRequest req;
    req.keys.assign(
        all.begin() + static_cast<long>(at),
        all.begin() + static_cast<long>(std::min(all.size(), at + kDashboardKeysPerBatch)));
    req.range = window;
    const BatchGetResponse res =
        parseBatchGetResponse(post("/v1/feedback:batchGet", serialize(req)));
    for (const auto& item : res.items) {
      if (!item.stats || item.stats->count == 0) continue;
      rows.push_back({{"key", item.key},
                      {"count", item.stats->count},
                      {"errors", item.stats->errors},
                      {"mean_ms", ms(item.stats->mean_ns)},
                      {"p50_ms", ms(item.stats->p50_ns)},
                      {"p95_ms", ms(item.stats->p95_ns)}});
    }
  }
  std::sort(rows.begin(), rows.end(), [](const json& a, const json& b) {
    return a["mean_ms"].get<double>() > b["mean_ms"].get<double>();
  });
  return json{{"window", {{"from", window.from}, {"to", window.to}}}, {"functions", rows}};
}

json HandlerReader::series(const std::string& key, int64_t now_s, int64_t minutes, int buckets) {
  minutes = std::clamp<int64_t>(minutes, 1, kDashboardMaxMinutes);
  buckets = static_cast<int>(
      std::clamp<int64_t>(buckets, 1, std::min<int64_t>(kDashboardMaxBuckets, minutes)));
  // The handler keeps minutes: bucket edges on minute boundaries (up to the end of the current
  // minute) put each stored minute in exactly one bucket.
  const int64_t end_minute = now_s / 60 + 1;
  json points = json::array();
  for (int b = 0; b < buckets; ++b) {
    const int64_t from = (end_minute - minutes + minutes * b / buckets) * 60;
    const int64_t to = (end_minute - minutes + minutes * (b + 1) / buckets) * 60;
    BatchGetRequest req;
    req.keys = {key};
    req.range = TimeWindow{rfc3339(from), rfc3339(to)};
    const BatchGetResponse res =
        parseBatchGetResponse(post("/v1/feedback:batchGet", serialize(req)));
    json p{{"from", rfc3339(from)}, {"to", rfc3339(to)}, {"count", 0}, {"mean_ms", nullptr}};
    if (!res.items.empty() && res.items[0].stats && res.items[0].stats->count > 0) {
      p["count"] = res.items[0].stats->count;
      p["mean_ms"] = ms(res.items[0].stats->mean_ns);
    }
    points.push_back(std::move(p));
  }
  return json{{"key", key}, {"series", points}};
}

}  // namespace perfhat::experiment
