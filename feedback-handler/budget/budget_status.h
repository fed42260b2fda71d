// libperfhat's collection-budget status as the handler takes it (POST /v1/budget, issue #22;
// docs/collection-budget.md): the plan's classes (frequency, duty ratio, weight, traced or
// sampled, rate, predicted overhead), the plan's predicted and measured overhead, the window, and
// in probing mode the stack samples per function with their estimated CPU time. The handler
// keeps the latest status per (service, instance) and answers it to editors (GET /v1/budget).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace perfhat::handler::budget {

// Bounds of one status (a larger one is refused whole, with the reason).
struct StatusLimits {
  static constexpr size_t kMaxBodyBytes = 1 << 20;
  static constexpr size_t kMaxClasses = 1000;
  static constexpr size_t kMaxSampledFunctions = 1000;
  static constexpr size_t kMaxFunctions = 10000;
  static constexpr size_t kMaxNameBytes = 4096;  // a class or function name
  static constexpr size_t kMaxLabelBytes = 256;  // service, version, instance, mode
  static constexpr double kMaxValue = 1e15;      // any number
  // Statuses kept: per service (its instances, newest first), and in all.
  static constexpr size_t kMaxInstancesPerService = 64;
  static constexpr size_t kMaxRows = 4096;
};

// A status that is not what libperfhat sends: the message names the field (e.g.
// "classes[3].frequency_hz: must be a finite number in [0, 1e15]").
class StatusError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct Status {
  std::string service, version, instance;
  // The status re-serialized from what was checked (unknown members are dropped), without
  // service/version/instance: what GET /v1/budget answers under "status".
  std::string json;
};

// Parses and checks one POST /v1/budget body. Throws StatusError.
Status parseStatus(std::string_view body);

}  // namespace perfhat::handler::budget
