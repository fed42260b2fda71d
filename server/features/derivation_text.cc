// Wording of the derivation facts: each struct of server/analysis/derivation.h has its sentence
// here, with the numbers formatted by the features' formatters.
#include "server/features/derivation_text.h"

#include <cstdio>
#include <string>
#include <type_traits>
#include <variant>

#include "server/features/features.h"
#include "server/features/names.h"

namespace perfhat::features {
namespace {

namespace fact = analysis::fact;
using analysis::IterationSource;
using analysis::NodeKind;

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

// Counts, rates, probabilities and coefficients: shortest form, up to 6 significant digits.
std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The first five names, then "…"; `unnamed` stands for a part without a name (not a call).
std::string firstFive(const std::vector<fact::CallName>& names, const std::string& unnamed) {
  std::string list;
  for (size_t i = 0; i < names.size() && i < 5; ++i) {
    const std::string name = callText(names[i]);
    list += (i ? ", " : "") + (name.empty() ? unnamed : name);
  }
  if (names.size() > 5) list += ", …";
  return list;
}

std::string iterationSource(const fact::Iterations& it) {
  switch (it.source) {
    case IterationSource::Production:
      return "production loop data (" + std::to_string(it.loop_executions) + " executions)";
    case IterationSource::ProducerSize:
      return "recorded result size of " + it.producer;
    case IterationSource::ConstantTrip:
      return "constant trip count";
    case IterationSource::Annotation:
      return "developer estimate (perfhat: iterations)";
    case IterationSource::DataFlow:
      return "at most the " + number(it.n) + " insertion(s) into " + it.container + " above";
    case IterationSource::Default:
      return "default";
    case IterationSource::None:
      break;
  }
  return "";
}

std::string changedCall(const fact::ChangedCall& c) {
  std::string path;
  for (double f : c.factors) path += number(f) + " × ";
  switch (c.change) {
    case fact::CallChange::New:
      return "new call " + callText(c.callee) + ": " + path + formatDuration(c.per_execution_ns);
    case fact::CallChange::MoreCalls:
      return "more calls of " + callText(c.callee) + ": " + path +
             formatDuration(c.per_execution_ns);
    case fact::CallChange::Removed:
      return "removed call " + callText(c.callee) + ": −" + path +
             formatDuration(c.per_execution_ns);
  }
  return "";
}

std::string partName(const fact::PartCost& p) {
  switch (p.kind) {
    case NodeKind::Call:
      return callText(p.callee);
    case NodeKind::Loop:
      return "loop at line " + std::to_string(p.line);
    default:
      return "branch at line " + std::to_string(p.line);
  }
}

std::string within(const fact::Within& w) {
  switch (w.scope) {
    case fact::Scope::Once:
      return "once: ";
    case fact::Scope::PerIteration:
      return "per iteration: ";
    case fact::Scope::Arm:
      return "arm " + std::to_string(w.arm) + ": ";
    case fact::Scope::Condition:
      return "condition: ";
  }
  return "";
}

std::string regressionModel(const fact::RegressionModel& m) {
  const auto beta = [&](size_t i) {
    return i < m.beta.size() ? number(m.beta[i]) : std::string("?");
  };
  return "model: latency = " + beta(0) + " ns + " + beta(1) + " ns × rate" +
         (m.beta.size() > 2 ? " + " + beta(2) + " ns × size" : std::string()) + ", adjusted R² " +
         number(m.r2_adj);
}

std::string negligibleBody(const fact::NegligibleBody& b) {
  const std::string what = b.kind == NodeKind::Loop     ? "this loop"
                           : b.kind == NodeKind::Branch ? "this branch"
                                                        : callText(b.function);
  return "no production data for " + what +
         "; it makes no calls and has no loops of unknown count, so its cost is taken as "
         "negligible";
}

std::string recursionCut(const fact::RecursionCut& r) {
  return "recursion: the call back to " + r.key + " is not counted (cost of the recursion unknown)";
}

std::string twoOutcomesRepeated(const fact::TwoOutcomesRepeated& t) {
  return callText(t.callee) + " has two outcomes in production (p50 " + formatDuration(t.p50_ns) +
         ", " + (t.slow ? "slow " : "fastest ") + formatDuration(t.other_ns) +
         "): called again on the same object after line " + std::to_string(t.line) +
         ", it finds its value loaded and is costed at the fast outcome instead of " +
         formatDuration(t.instead_ns);
}

}  // namespace

std::string contextText(const std::vector<fact::ContextOutcome>& outcomes) {
  std::string out;
  for (const fact::ContextOutcome& c : outcomes) {
    if (!out.empty()) out += "; ";
    out += callText(c.inner) + " in " + callText(c.outer) + " (p50 " + formatDuration(c.p50_ns) +
           ", slow outcome " + formatDuration(c.slow_ns) +
           (c.calls != 1 ? ", " + number(c.calls) + " calls" : "") + ")";
  }
  return out;
}

std::string summaryText(const fact::Summary& s) {
  return std::visit(
      Overloaded{
          [](const std::monostate&) -> std::string { return ""; },
          [](const fact::Production& p) { return "production: mean " + formatDuration(p.mean_ns); },
          [](const fact::ProductionCallSite& p) {
            return "production call site " + callText(p.caller) + " → " + callText(p.callee);
          },
          [](const fact::ProductionCallee& p) {
            return "production: " + callText(p.callee) + " mean " + formatDuration(p.mean_ns);
          },
          [](const fact::PartsSum& p) {
            return "Σ " + std::to_string(p.parts) + " part(s) = " + formatDuration(p.total_ns);
          },
          [](const fact::NothingKnown&) -> std::string {
            return "no production data and nothing known inside";
          },
          [](const fact::MeasuredPlusNew& m) {
            return "measured " + formatDuration(m.measured_ns) + " + new " +
                   formatDuration(m.added_ns);
          },
          [](const fact::MeasuredDiff& m) {
            return "measured " + formatDuration(m.measured_ns) + " − removed " +
                   formatDuration(m.removed_ns) + " + new " + formatDuration(m.added_ns);
          },
          [](const fact::BodyUnavailable&) -> std::string { return "body not available"; },
          [](const fact::RecursiveCall&) -> std::string {
            return "recursive call: cost of the recursion unknown";
          },
          [](const fact::DepthTruncated& d) {
            return "analysis truncated: the chain of callees without production data is "
                   "deeper than " +
                   std::to_string(d.max_depth) + " bodies";
          },
          [](const fact::RecursionCut& r) { return recursionCut(r); },
          [](const fact::BodyCostUnknown&) -> std::string {
            return "no production data; the body's cost is unknown";
          },
          [](const fact::NoData& n) { return "no production data for " + callText(n.callee); },
          [](const fact::Regression& r) {
            return formatDuration(r.predicted_ns) + " at " + number(r.rate) + " calls/s of " +
                   callText(r.caller);
          },
          [](const fact::CalleeOverall& c) {
            return formatDuration(c.mean_ns) + " (" + callText(c.callee) + " overall, " +
                   std::to_string(c.calls) + " calls)";
          },
          [](const fact::FromBody& b) {
            return formatDuration(b.mean_ns) + " from the body of " + callText(b.callee);
          },
          [](const fact::Negligible&) -> std::string {
            return "no production data; makes no calls and has no loops: negligible";
          },
          [](const fact::LoopProduct& l) {
            const std::string body = l.body == fact::LoopProduct::Body::Known
                                         ? formatDuration(l.body_ns)
                                     : l.body == fact::LoopProduct::Body::Negligible ? "negligible"
                                                                                     : "?";
            return number(l.iterations) + " × " + body;
          },
          [](const fact::BranchUnknown&) -> std::string { return "?"; },
          [](const fact::WorstArm& w) { return "worst arm " + formatDuration(w.mean_ns); },
          [](const fact::ArmsWeighted& a) {
            return "arms weighted " + number(a.taken) + " / " + number(a.not_taken) +
                   (a.production ? " (production)" : "");
          },
          [](const fact::ArmsEqual& a) { return "arms weighted " + number(a.p) + " each"; },
          [](const fact::RepeatedFast& r) {
            return formatDuration(r.fast_ns) + ": " + callText(r.callee) +
                   " already ran on the same object above (line " + std::to_string(r.line) + ")";
          },
      },
      s);
}

std::string inputText(const fact::Input& in) {
  std::string out;
  for (const fact::Within& w : in.within) out += within(w);
  out += std::visit(
      Overloaded{
          [](const fact::PartCost& p) { return partName(p) + ": " + formatDuration(p.mean_ns); },
          [](const fact::Iterations& it) {
            return "iterations " + number(it.n) + " (" + iterationSource(it) + ")";
          },
          [](const fact::ChangedCall& c) { return changedCall(c); },
          [](const fact::MeasuredTotal& m) {
            return "measured total: " + formatDuration(m.mean_ns);
          },
          [](const fact::CallSitesUsed& c) {
            return std::to_string(c.sites) + " call site(s) of " + callText(c.callee) +
                   " in other callers";
          },
          [](const fact::CallSiteSeen& c) {
            return c.caller + ": " + formatDuration(c.mean_ns) + " at " + number(c.rate) +
                   " calls/s";
          },
          [](const fact::RegressionModel& m) { return regressionModel(m); },
          [](const fact::CalleeStats& c) {
            return callText(c.callee) + ": mean " + formatDuration(c.mean_ns) + ", p99 " +
                   formatDuration(c.p99_ns);
          },
          [](const fact::BodySummary& b) { return b.key + ": " + summaryText(b.summary); },
          [](const fact::BranchEvidence& b) {
            return "branch data from production: " + callText(b.callee) + " ran " +
                   number(b.calls) + "× per call of " + callText(b.caller) + " at the top of arm " +
                   std::to_string(b.arm);
          },
      },
      in.fact);
  return out;
}

namespace {

// assumptionText's sentences, one table per part of the analysis that states them (the visit
// over their union does not compile while a kind of fact::Assumption has no sentence).

// Parts left out of a sum or merged into one figure (function totals, bodies).
auto partsWording() {
  return Overloaded{
      [](const fact::Aggregated& g) {
        return std::string(g.instantiations ? "aggregated across overloads / instantiations of "
                                            : "aggregated across overloads of ") +
               g.name;
      },
      [](const fact::NegligibleParts& p) {
        return "taken as negligible (no production data; their bodies make no calls and have "
               "no loops): " +
               firstFive(p.names, "");
      },
      [](const fact::UnknownParts& p) {
        return std::to_string(p.names.size()) +
               " part(s) without data not counted: " + firstFive(p.names, "a nested block");
      },
      [](const fact::SumOfParts& s) {
        return "no production data for " + callText(s.function) + ": the sum of its parts";
      },
      [](const fact::NegligibleBody& b) { return negligibleBody(b); },
  };
}

// A measured function's change: new, possibly new and removed calls.
auto changeWording() {
  return Overloaded{
      [](const fact::NewCallsAdd&) -> std::string { return "new calls add to the measured total"; },
      [](const fact::NotCounted& n) {
        return "not counted: " + changedCall(n.call) +
               " (possibly new: " + formatDuration(n.floor_ns) + " backed by data fits in the " +
               formatDuration(n.room_ns) + " production does not attribute to measured calls)";
      },
      [](const fact::ComparedWithDeployed& c) {
        return "compared with the body production ran (revision " + c.revision + ")";
      },
      [](const fact::ClampedAtZero&) -> std::string {
        return "the removed calls cost more than the measured total: the prediction is "
               "clamped at 0";
      },
      [](const fact::UnknownNewCalls& u) {
        return std::to_string(u.count) + " new call(s) without data not counted";
      },
      [](const fact::LoadMovesOn& m) {
        return "the removed " + callText(m.removed) + " loaded " + m.object + "'s value first; " +
               callText(m.next) + " still reads it and now loads it, so the removal saves " +
               formatDuration(m.loaded_ns) + " per call, not " + formatDuration(m.loading_ns);
      },
  };
}

// Loops: where an iteration count came from when production has none.
auto loopWording() {
  return Overloaded{
      [](const fact::DeveloperIterations&) -> std::string {
        return "iterations estimated by the developer";
      },
      [](const fact::InsertionBound& b) {
        return "iterations bounded by the insertions into " + b.container +
               (b.counts_assumed ? " (their own count rests on assumptions)" : "") +
               ": an upper bound when it drops duplicates";
      },
      [](const fact::DefaultIterations& d) {
        return "default " + number(d.n) +
               " iterations: no loop data, producer size, trip count or annotation";
      },
      [](const fact::PercentilesScaled&) -> std::string {
        return "percentiles scaled by the iteration count";
      },
  };
}

// Branches: how the arms were weighed without production's shares.
auto branchWording() {
  return Overloaded{
      [](const fact::WorstCase&) -> std::string {
        return "worst case: the most expensive arm is taken";
      },
      [](const fact::StaticPrior& p) {
        return "no branch data: static prior (" + branchPriorText(p.heuristic) +
               "): taken p = " + number(p.taken) + ", not taken p = " + number(p.not_taken);
      },
      [](const fact::EqualArms& e) {
        return "no branch data: " + std::to_string(e.arms) +
               " arms assumed equally likely (p = " + number(e.p) + ")";
      },
  };
}

// Calls costed from other callers' call sites or the callee's distribution.
auto callSiteWording() {
  return Overloaded{
      [](const fact::OneContext& c) {
        return "one calling context observed: this caller's may lie anywhere from its p50 to "
               "its p90 (" +
               formatDuration(c.p50_ns) + "–" + formatDuration(c.p90_ns) + ")";
      },
      [](const fact::OtherInputs& o) {
        return "production measured it from other callers only, each returning about " +
               number(o.mean_size) +
               " elements: this caller's input may be of any size, down to one element's "
               "share (" +
               formatDuration(o.one_element_ns) + ")";
      },
      [](const fact::WeakFit& w) {
        return "weak fit: shrunk toward the call sites' mean latency by " + number(1 - w.r2_adj) +
               " (adjusted R² " + number(w.r2_adj) + ")";
      },
      [](const fact::OutsideObserved& o) {
        return "workload " + number(o.rate) + " calls/s outside the observed " + number(o.lo) +
               "–" + number(o.hi) + ": predicted at the nearest observed workload";
      },
      [](const fact::ConstantWorkloads&) -> std::string {
        return "workloads of the call sites do not vary: their weighted mean is used";
      },
      [](const fact::WorkloadUnknown& w) {
        return "workload of " + callText(w.caller) +
               " unknown: the call sites' mean workload is assumed";
      },
      [](const fact::InputSizeAtMean& s) {
        return "input size of this caller assumed at the mean (" + number(s.size) + ")";
      },
      [](const fact::NoCallSiteData&) -> std::string {
        return "no call-site workload data: the callee's overall distribution is used";
      },
  };
}

// Calls costed from the callee's body or its two production outcomes.
auto calleeBodyWording() {
  return Overloaded{
      [](const fact::BodyAnalysed& b) {
        return "no production data for " + callText(b.callee) + ": its body" +
               (b.file.empty() ? "" : " in " + b.file) + " was analysed";
      },
      [](const fact::RecursionCut& r) { return recursionCut(r); },
      [](const fact::ContextDependent& c) {
        return "cost depends on the caller's context: production shows two outcomes of " +
               contextText(c.outcomes) +
               "; its callers ran it in the fast one, from here it may take the slow one (up "
               "to +" +
               formatDuration(c.extra_ns) + " per call)";
      },
      [](const fact::TwoOutcomesRepeated& t) { return twoOutcomesRepeated(t); },
      [](const fact::FirstAccessHere& f) {
        return "first access from here: this caller makes no other call of " +
               contextText(f.outcomes) + ", so the new call loads the value and takes the " +
               "slow outcome (+" + formatDuration(f.extra_ns) + " per call)";
      },
  };
}

}  // namespace

std::string assumptionText(const fact::Assumption& a) {
  return std::visit(Overloaded{partsWording(), changeWording(), loopWording(), branchWording(),
                               callSiteWording(), calleeBodyWording()},
                    a);
}

}  // namespace perfhat::features
