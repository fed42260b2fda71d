// "Show callers with predicted impact" (issue #25): every function in the workspace that calls
// the function under the cursor, and what the change the code as written makes to that function
// (its prediction against what production measured) costs per call of each caller: the change
// × how often the caller runs the call (enclosing loops' counts as written, branch priors).
#pragma once

#include <string>
#include <vector>

#include "server/analysis/snapshot.h"
#include "server/index/workspace_index.h"

namespace perfhat::index {

struct CallSiteImpact {
  analysis::Range range;
  double executions = 1;                 // per call of the caller
  std::vector<std::string> assumptions;  // loop counts not in the source, branch weights
};

struct CallerImpact {
  std::string key, name, file;
  analysis::Range range;  // the caller's definition
  std::vector<CallSiteImpact> sites;
  double executions = 0;  // Σ sites
  double impact_ns = 0;   // change × executions; 0 when the change is unknown
};

struct CallersReport {
  std::string key, name;
  bool change_known = false;
  double change_ns = 0;  // predicted − measured mean per call; the whole prediction when new
  std::string basis;     // how change_ns came about, one line
  std::vector<CallerImpact> callers;  // largest |impact| first
};

CallersReport callersWithImpact(const analysis::FunctionInfo& function,
                                const WorkspaceIndex& index);

// Markdown for the report (a table of callers), as the command's presentation.
std::string callersMarkdown(const CallersReport& report);

}  // namespace perfhat::index
