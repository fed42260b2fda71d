// Where the editor reads a service's collection-budget status (docs/collection-budget.md): the
// configured feedback handler (GET /v1/budget?service=, sent there by libperfhat), or the local
// status file (budgetStatus / PERFHAT_BUDGET_STATUS) when the handler has none, is older than
// /v1/budget (404: no error), is down, or its status is older than the file.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "server/budget/collection_budget.h"
#include "server/feedback/provider.h"

namespace perfhat::server {

struct BudgetSources {
  std::string status_file;  // budgetStatus / PERFHAT_BUDGET_STATUS ("" = none)
  std::string pins_file;    // budgetPins / PERFHAT_BUDGET_PINS
  std::string service;      // budgetService / OTEL_SERVICE_NAME ("" = any service)
  std::shared_ptr<feedback::FeedbackProvider> provider;  // the configured feedback source
};

struct LoadedBudget {
  std::optional<collection_budget::Status> status;
  std::string from;   // "handler http://…" or "file /path"
  std::string error;  // why there is no status (or what failed beside the one used)
};

// The newest of the handler's status and the file's. A handler read that failed is rested for
// a few seconds (code lenses ask often); answers are reused for about a second.
LoadedBudget loadBudget(const BudgetSources& s);

}  // namespace perfhat::server
