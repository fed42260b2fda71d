#include "server/features/callers_text.h"

#include <filesystem>

#include "server/features/features.h"
#include "server/features/names.h"

namespace perfhat::features {
namespace {

// A change, which may be negative: "+20 ms", "-1.5 s".
std::string signedDuration(double ns) { return (ns >= 0 ? "+" : "") + formatDuration(ns); }

}  // namespace

std::string callersBasisText(const index::CallersReport& r) {
  using Basis = index::CallersReport::Basis;
  switch (r.basis) {
    case Basis::PredictedMinusMeasured:
      return "predicted " + formatDuration(r.predicted_ns) + " − measured " +
             formatDuration(r.measured_ns) + " per call";
    case Basis::AllNew:
      return "no production data: the whole prediction (" + formatDuration(r.predicted_ns) +
             " per call) is new";
    case Basis::MeasuredUnchanged:
      return "measured, no change predicted";
    case Basis::Unknown:
      break;
  }
  return "no production data and no prediction: the change is unknown";
}

std::string siteAssumptionText(const index::SiteAssumption& a) {
  const std::string where = std::to_string(a.line + 1);
  if (a.kind == index::SiteAssumption::Kind::LoopCountedOnce)
    return "loop at line " + where + ": iterations unknown, counted once";
  return "branch at line " + where + ": arm taken with probability " +
         std::to_string(a.share).substr(0, 4) +
         (a.prior ? " (" + branchPriorText(*a.prior) + ")" : " (equal arms)");
}

std::string callersMarkdown(const index::CallersReport& r) {
  std::string md =
      "### Callers of `" + functionName(r.name, r.implicit) +
      "`\n\nChange per call: " + (r.change_known ? signedDuration(r.change_ns) : std::string("?")) +
      " (" + callersBasisText(r) + ")\n\n";
  if (r.callers.empty()) return md + "No caller in the workspace index.\n";
  md += "| caller | file | calls per call | predicted impact |\n|---|---|---|---|\n";
  for (const auto& c : r.callers) {
    md += "| `" + c.name + "` | " + std::filesystem::path(c.file).filename().string() + ":" +
          std::to_string(c.range.start.line + 1) + " | " + formatCount(c.executions) + " | " +
          (r.change_known ? signedDuration(c.impact_ns) : std::string("?")) + " |\n";
  }
  return md;
}

}  // namespace perfhat::features
