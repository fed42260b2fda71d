// The collection budget's status sent to the handler (POST /v1/budget, issue #22): the status
// the controller writes to PERFHAT_BUDGET_STATUS, labelled with the service, version and
// instance, with the window, and in probing mode each sampled function's estimated CPU time.
// Sent every kPublishInterval seconds and at the first tick after the plan changes, so an editor
// that pinned a function sees the library's new plan within a second or two.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "budget_controller.h"
#include "perfhat/exporter.hpp"

namespace perfhat::budget {

struct PublishTunables {
  static constexpr double kPublishInterval = 5;  // s between statuses of an unchanged plan
  static constexpr double kRefusedRetry = 60;    // s after a refusal (an older handler: 404)
  static constexpr std::size_t kMaxSampledRows = 200;
};

class StatusPublisher {
 public:
  // Whether a status is due at `now_s` for a plan that has changed `plan_changes` times.
  bool due(double now_s, uint64_t plan_changes) const;
  // The body of POST /v1/budget from the controller's status JSON, its plan and its stack
  // samples (cumulative counts). Each call adds the samples since the previous one to the
  // functions' estimated CPU time at the probe rate they were taken at: one sample stands for
  // 1 / probing_hz seconds of process CPU.
  std::string body(const std::string& status_json, const Plan& plan,
                   const std::vector<SampledFunction>& sampled, const Resource& resource,
                   std::size_t windows, double now_s, int64_t now_unix_ns);
  // What the exporter answered for the body made at `now_s`.
  void sent(ExportResult r, double now_s, uint64_t plan_changes);

 private:
  struct Estimate {
    uint64_t samples = 0, self = 0;  // counts already estimated
    double cpu_s = 0, self_cpu_s = 0;
  };
  std::unordered_map<std::string, Estimate> estimates_;
  double last_probing_hz_ = 0;
  double first_sample_s_ = -1;
  double next_s_ = 0;
  uint64_t sent_changes_ = ~uint64_t{0};
  bool refused_ = false;  // the last one was refused: wait kRefusedRetry whatever changes
};

}  // namespace perfhat::budget
