#include "server/index/callers_impact.h"

#include <algorithm>
#include <cmath>

namespace perfhat::index {
namespace {

using analysis::FunctionInfo;
using analysis::Node;
using analysis::NodeKind;

// How often node `id` runs per call of `f`, from the structure as written.
CallSiteImpact siteImpact(const FunctionInfo& f, int id) {
  CallSiteImpact s;
  s.range = f.nodes[id].range;
  for (int child = id, parent = f.nodes[id].parent; parent >= 0;
       child = parent, parent = f.nodes[parent].parent) {
    const Node& p = f.nodes[parent];
    const Node& c = f.nodes[child];
    if (p.kind == NodeKind::Loop && c.arm >= 0) {
      if (p.loop.constant_trip) {
        s.executions *= *p.loop.constant_trip;
      } else if (p.loop.annotated_iterations) {
        s.executions *= *p.loop.annotated_iterations;
      } else {
        s.assumptions.push_back({SiteAssumption::Kind::LoopCountedOnce, p.range.start.line});
      }
    } else if (p.kind == NodeKind::Branch && c.arm >= 0 && p.branch.arms > 0) {
      double share = 1.0 / p.branch.arms;
      if (p.branch.arms == 2 && p.branch.prior)
        share = c.arm == 0 ? *p.branch.prior : 1 - *p.branch.prior;
      s.executions *= share;
      SiteAssumption a{SiteAssumption::Kind::BranchArm, p.range.start.line, share};
      if (p.branch.prior) a.prior = p.branch.prior_reason;
      s.assumptions.push_back(std::move(a));
    }
  }
  return s;
}

}  // namespace

CallersReport callersWithImpact(const FunctionInfo& function, const WorkspaceIndex& index) {
  CallersReport r;
  r.key = function.key;
  r.name = function.name;
  r.implicit = function.implicit;
  const auto& e = function.root().estimate;
  const auto& m = function.root().measured;
  if (e.known()) r.predicted_ns = e.dist.mean_ns;
  if (m && m->count > 0) r.measured_ns = m->mean_ns;
  if (e.known() && m && m->count > 0) {
    r.basis = CallersReport::Basis::PredictedMinusMeasured;
    r.change_ns = r.predicted_ns - r.measured_ns;
  } else if (e.known()) {
    r.basis = CallersReport::Basis::AllNew;
    r.change_ns = r.predicted_ns;
  } else if (m && m->count > 0) {
    r.basis = CallersReport::Basis::MeasuredUnchanged;
    r.change_ns = 0;
  }
  r.change_known = r.basis != CallersReport::Basis::Unknown;
  for (const Caller& c : index.callersOf(function.key)) {
    CallerImpact ci;
    ci.key = c.function->key;
    ci.name = c.function->name;
    ci.file = c.function->file;
    ci.range = c.function->range;
    for (int id : c.call_nodes) {
      ci.sites.push_back(siteImpact(*c.function, id));
      ci.executions += ci.sites.back().executions;
    }
    ci.impact_ns = r.change_known ? r.change_ns * ci.executions : 0;
    r.callers.push_back(std::move(ci));
  }
  std::stable_sort(r.callers.begin(), r.callers.end(), [](const auto& a, const auto& b) {
    return std::fabs(a.impact_ns) > std::fabs(b.impact_ns);
  });
  return r;
}

}  // namespace perfhat::index
