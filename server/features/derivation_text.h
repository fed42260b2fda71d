// The words for the analysis's derivations (server/analysis/derivation.h): the one place a
// summary, an input or an assumption of an estimate becomes text (the hover's "Prediction"
// block, the inlay hint's tooltip, the context-dependent regression warning).
#pragma once

#include <string>
#include <vector>

#include "server/analysis/derivation.h"

namespace perfhat::features {

// One line, e.g. "100 × 12.4 ms"; "" for an estimate without a summary.
std::string summaryText(const analysis::fact::Summary& s);
// e.g. "per iteration: load(): 2 ms".
std::string inputText(const analysis::fact::Input& in);
// e.g. "default 10 iterations: no loop data, producer size, trip count or annotation".
std::string assumptionText(const analysis::fact::Assumption& a);
// The inner calls with two outcomes, e.g. "get() in load() (p50 1 ms, slow outcome 9 ms)".
std::string contextText(const std::vector<analysis::fact::ContextOutcome>& outcomes);

}  // namespace perfhat::features
