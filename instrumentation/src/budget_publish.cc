#include "budget_publish.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "engine.h"

namespace perfhat::budget {

using nlohmann::json;
using T = PublishTunables;

bool StatusPublisher::due(double now_s, uint64_t plan_changes) const {
  return now_s >= next_s_ || (!refused_ && plan_changes != sent_changes_);
}

std::string StatusPublisher::body(const std::string& status_json, const Plan& plan,
                                  const std::vector<SampledFunction>& sampled,
                                  const Resource& resource, std::size_t windows, double now_s,
                                  int64_t now_unix_ns) {
  // Samples drained since the last body were taken at the rate then in force (the rate of the
  // plan before a change; the current one otherwise).
  const double hz = last_probing_hz_ > 0 ? last_probing_hz_ : plan.probing_hz;
  for (const SampledFunction& f : sampled) {
    Estimate& e = estimates_[f.function];
    if (hz > 0) {
      e.cpu_s += static_cast<double>(f.samples - std::min(e.samples, f.samples)) / hz;
      e.self_cpu_s += static_cast<double>(f.self - std::min(e.self, f.self)) / hz;
    }
    e.samples = f.samples;
    e.self = f.self;
    if (first_sample_s_ < 0 && f.samples > 0) first_sample_s_ = now_s;
  }
  last_probing_hz_ = plan.probing_hz;

  // A status without sample rows of its own (Controller::status_json(true)) is completed as
  // text: this runs on the collector's thread every few seconds, and parsing the status back was
  // the larger part of its cost. Any other status is parsed and its fields replaced.
  const bool splice = status_json.size() >= 2 && status_json.front() == '{' &&
                      status_json.back() == '}' &&
                      status_json.find("\"sampled_functions\"") == std::string::npos;
  json j = splice ? json::object() : json::parse(status_json, nullptr, false);
  if (!j.is_object()) j = json::object();
  j["service"] = resource.service_name.empty() ? "unknown_service" : resource.service_name;
  j["version"] = resource.service_version;
  j["instance"] = resource.host_name + "/" + std::to_string(::getpid());
  j["window_s"] = windows;  // planning windows are 1 s
  j["sent_unix_ns"] = now_unix_ns;
  j["sampling_wall_s"] = first_sample_s_ < 0 ? 0.0 : now_s - first_sample_s_;
  json rows = json::array();
  for (std::size_t i = 0; i < sampled.size() && i < T::kMaxSampledRows; ++i) {
    const Estimate& e = estimates_[sampled[i].function];
    rows.push_back({{"function", sampled[i].function},
                    {"samples", sampled[i].samples},
                    {"self", sampled[i].self},
                    {"estimated_cpu_s", e.cpu_s},
                    {"estimated_self_cpu_s", e.self_cpu_s}});
  }
  j["sampled_functions"] = std::move(rows);
  std::string out = j.dump(-1, ' ', false, json::error_handler_t::replace);
  if (!splice) return out;
  // The status's fields, then these: "{...status...,<these without their opening brace>".
  std::string spliced = status_json.substr(0, status_json.size() - 1);
  if (spliced.size() > 1) spliced += ',';
  spliced.append(out, 1, std::string::npos);
  return spliced;
}

void StatusPublisher::sent(ExportResult r, double now_s, uint64_t plan_changes) {
  sent_changes_ = plan_changes;
  refused_ = r == ExportResult::kPermanentFailure;
  next_s_ = now_s + (r == ExportResult::kPermanentFailure ? T::kRefusedRetry : T::kPublishInterval);
}

}  // namespace perfhat::budget

namespace perfhat::detail {

void Engine::publish_budget() {
  budget::Controller* made = budget::Controller::if_created();
  if (made == nullptr || !made->enabled()) return;
  budget::Controller& c = *made;
  std::shared_ptr<Exporter> exporter = exports_.exporter();
  Resource resource;
  {
    Lock l(mu_);
    resource = resource_;
  }
  if (!exporter) return;
  // Only the background thread calls this: the publisher is its own.
  static budget::StatusPublisher publisher;
  const double now = now_s();
  const budget::Plan plan = c.plan();
  if (!publisher.due(now, plan.changes)) return;
  const std::size_t windows = c.windows_setting();
  const std::string body = publisher.body(c.status_json(true), plan, c.sampled(), resource, windows,
                                          now, static_cast<int64_t>(to_unix_ns(now_ticks())));
  const ExportResult r = exporter->export_budget_status(body);
  publisher.sent(r, now, plan.changes);
  // Said once: a handler without /v1/budget answers 404 to each try. An exporter with no place
  // for the status (in-memory, custom) refuses without an error: nothing to say.
  static bool told = false;
  if (r == ExportResult::kPermanentFailure && !told && !exporter->last_error().empty()) {
    told = true;
    std::fprintf(stderr, "perfhat: collection-budget status not taken (%s); retried every %g s\n",
                 exporter->last_error().c_str(), budget::PublishTunables::kRefusedRetry);
  }
}

}  // namespace perfhat::detail
