// The words of "show callers with predicted impact" (index/callers_report.h): the basis of the
// change, each call site's assumptions, and the Markdown table the command shows.
#pragma once

#include <string>

#include "server/index/callers_report.h"

namespace perfhat::features {

// "predicted 30 ms − measured 10 ms per call", "no production data: the whole prediction
// (20 ms per call) is new", …
std::string callersBasisText(const index::CallersReport& r);
// "loop at line 4: iterations unknown, counted once", "branch at line 7: arm taken with
// probability 0.50 (equal arms)"
std::string siteAssumptionText(const index::SiteAssumption& a);
// A heading, the change per call and its basis, and a table of the callers (largest impact first).
std::string callersMarkdown(const index::CallersReport& r);

}  // namespace perfhat::features
