// perfhat.collectionBudget (workspace/executeCommand) and the "always trace" code lenses: the
// service's collection budget as libperfhat exported it (its status file), re-solved here for a
// pin or an importance change, and the pin written to the pins file the library re-reads.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "server/analysis/snapshot.h"
#include "server/budget/collection_budget.h"
#include "server/features/features.h"

namespace perfhat::server {

struct BudgetFiles {
  std::string status;  // PERFHAT_BUDGET_STATUS of the service
  std::string pins;    // PERFHAT_BUDGET_PINS of the service
};

inline constexpr const char* kCollectionBudgetCommand = "perfhat.collectionBudget";

// Arguments: [] → {"plan": the exported plan}; [FUNCTION], [{"always": FUNCTION}] or
// [{"weight": CLASS, "value": W}] → {"before", "plan" (re-solved), "pins_file", "pin",
// "message"}. Throws std::invalid_argument for bad arguments, std::runtime_error when the
// status cannot be read or the pins file written.
nlohmann::json collectionBudgetCommand(const BudgetFiles& files, const nlohmann::json& args);
// The same for a status already read (from the handler or the file; budget_status_source.h).
// The no-argument answer also lists "sampled_functions": probing mode's per-function CPU time,
// estimated from stack samples.
nlohmann::json collectionBudgetCommand(const collection_budget::Status& status,
                                       const std::string& pins_file, const nlohmann::json& args);

// The status file; fails (with the reason) when it is not configured, missing or malformed.
Result<collection_budget::Status> loadBudgetStatus(const std::string& path);

// One lens per function the status lists: its class, traced or sampled (with the stack
// samples' CPU estimate for an untraced class in probing mode), and the action.
std::vector<features::CodeLens> budgetLenses(const analysis::Snapshot& s,
                                             const collection_budget::Status& status);

}  // namespace perfhat::server
