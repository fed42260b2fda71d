// The words for the analysis snapshot's enums: the one place a model or a match kind becomes
// text (hover, inlay hint tooltips, the --match-report field).
#pragma once

#include <string>
#include <string_view>

#include "server/analysis/snapshot.h"

namespace perfhat::features {

// "callsite-regression", "loop", …; "" for Model::Unstated.
std::string_view modelName(analysis::Model m);
// "exact", "file-line", …; "" for MatchKind::None (the --match-report field).
std::string_view matchKindName(analysis::MatchKind k);
// How the hover says it: "exact key", "definition file and line", …; "" for None.
std::string_view matchKindText(analysis::MatchKind k);
// "pointer heuristic: non-null", "negated …", "… (the else arm)", several joined by " + "; a
// short circuit's as "short circuit: the right operand of && runs when the left holds (…)".
std::string branchPriorText(const analysis::BranchPrior& p);
// "kCount = 16", "sizeof(a) / sizeof(a[0]) = 8", "range over int[8]: 8 elements"; "" for none.
std::string tripCountSourceText(const analysis::TripCountSource& s);

}  // namespace perfhat::features
