// "Show callers with predicted impact" (issue #25): every function in the workspace that calls
// the function under the cursor, and what the change the code as written makes to that function
// (its prediction against what production measured) costs per call of each caller: the change
// × how often the caller runs the call (enclosing loops' counts as written, branch priors).
#pragma once

#include "server/analysis/snapshot.h"
#include "server/index/callers_report.h"
#include "server/index/workspace_index.h"

namespace perfhat::index {

CallersReport callersWithImpact(const analysis::FunctionInfo& function,
                                const WorkspaceIndex& index);

}  // namespace perfhat::index
