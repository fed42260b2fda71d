// Operations routes: sync now (local mode), liveness, Prometheus metrics.
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "feedback-handler/http/http_answers.h"
#include "feedback-handler/http/server.h"
#include "feedback-handler/util/rfc3339.h"

namespace perfhat::handler {

using nlohmann::json;

void HandlerServer::postSync(const httplib::Request& req, httplib::Response& res,
                             const httplib::ContentReader& reader) {
  std::string ignored;  // no parameters; a small body is read so the connection stays usable
  if (!readBody(req, res, reader, 64u << 10, ignored)) return;
  if (!syncer_) return setError(res, 404, "not_found", "sync exists in local mode only");
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
  res.set_content(json{{"ok", all_ok}, {"upstreams", ups}}.dump(), kJson);
}

void HandlerServer::getHealthz(const httplib::Request&, httplib::Response& res) {
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
      ups.push_back({{"url", st.url},
                     {"ok", st.ok},
                     {"error", st.last_error},
                     {"last_success", st.last_success_ns ? formatRfc3339(st.last_success_ns) : ""},
                     {"failures", st.failures}});
    }
    out["upstreams"] = ups;
    out["data_age_s"] = syncer_->dataAgeSeconds();
  }
  res.set_content(out.dump(), kJson);
}

void HandlerServer::getMetrics(const httplib::Request&, httplib::Response& res) {
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
}

}  // namespace perfhat::handler
