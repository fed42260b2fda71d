// The answer of "show callers with predicted impact" (issue #25) as numbers and facts:
// callers_impact.h computes it from the workspace index, features/callers_text.h words it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "server/analysis/snapshot.h"

namespace perfhat::index {

// What the count of a call per call of its caller assumes where the source does not say.
struct SiteAssumption {
  enum class Kind {
    LoopCountedOnce,  // an enclosing loop without a known trip count
    BranchArm,        // an enclosing branch's arm, weighed by `share`
  };
  Kind kind = Kind::LoopCountedOnce;
  int line = 0;      // the loop's or branch's first line (0-based)
  double share = 1;  // BranchArm: the arm's probability
  // BranchArm: why the prior is what it is; none when the arms are weighed equally.
  std::optional<analysis::BranchPrior> prior;
  bool operator==(const SiteAssumption&) const = default;
};

struct CallSiteImpact {
  analysis::Range range;
  double executions = 1;  // per call of the caller
  std::vector<SiteAssumption> assumptions;
};

struct CallerImpact {
  std::string key, name, file;
  analysis::Range range;  // the caller's definition
  std::vector<CallSiteImpact> sites;
  double executions = 0;  // Σ sites
  double impact_ns = 0;   // change × executions; 0 when the change is unknown
};

struct CallersReport {
  // How the change per call came about.
  enum class Basis {
    PredictedMinusMeasured,  // the prediction against production's mean
    AllNew,                  // no production data: the whole prediction is new
    MeasuredUnchanged,       // measured, and nothing predicted: no change
    Unknown,                 // neither
  };
  std::string key, name;
  bool implicit = false;  // a special member the compiler generated
  Basis basis = Basis::Unknown;
  double predicted_ns = 0;  // mean per call, when predicted
  double measured_ns = 0;   // production's mean per call, when measured
  bool change_known = false;
  double change_ns = 0;  // predicted − measured mean per call; the whole prediction when new
  std::vector<CallerImpact> callers;  // largest |impact| first
};

}  // namespace perfhat::index
