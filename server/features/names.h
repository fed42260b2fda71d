// The words for the analysis snapshot's enums: the one place a model or a match kind becomes
// text (hover, inlay hint tooltips, the --match-report field).
#pragma once

#include <string_view>

#include "server/analysis/snapshot.h"

namespace perfhat::features {

// "callsite-regression", "loop", …; "" for Model::Unstated.
std::string_view modelName(analysis::Model m);
// "exact", "file-line", …; "" for MatchKind::None (the --match-report field).
std::string_view matchKindName(analysis::MatchKind k);
// How the hover says it: "exact key", "definition file and line", …; "" for None.
std::string_view matchKindText(analysis::MatchKind k);

}  // namespace perfhat::features
