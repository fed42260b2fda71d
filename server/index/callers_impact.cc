#include "server/index/callers_impact.h"

#include "server/features/names.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

namespace perfhat::index {
namespace {

using analysis::FunctionInfo;
using analysis::Node;
using analysis::NodeKind;

std::string ms(double ns) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%+.3g ms", ns / 1e6);
  return buf;
}

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
        s.assumptions.push_back("loop at line " + std::to_string(p.range.start.line + 1) +
                                ": iterations unknown, counted once");
      }
    } else if (p.kind == NodeKind::Branch && c.arm >= 0 && p.branch.arms > 0) {
      double share = 1.0 / p.branch.arms;
      if (p.branch.arms == 2 && p.branch.prior)
        share = c.arm == 0 ? *p.branch.prior : 1 - *p.branch.prior;
      s.executions *= share;
      s.assumptions.push_back("branch at line " + std::to_string(p.range.start.line + 1) +
                              ": arm taken with probability " + std::to_string(share).substr(0, 4) +
                              (p.branch.prior
                                   ? " (" + features::branchPriorText(p.branch.prior_reason) + ")"
                                   : " (equal arms)"));
    }
  }
  return s;
}

}  // namespace

CallersReport callersWithImpact(const FunctionInfo& function, const WorkspaceIndex& index) {
  CallersReport r;
  r.key = function.key;
  r.name = function.name;
  const auto& e = function.root().estimate;
  const auto& m = function.root().measured;
  if (e.known() && m && m->count > 0) {
    r.change_known = true;
    r.change_ns = e.dist.mean_ns - m->mean_ns;
    r.basis = "predicted " + ms(e.dist.mean_ns).substr(1) + " − measured " +
              ms(m->mean_ns).substr(1) + " per call";
  } else if (e.known()) {
    r.change_known = true;
    r.change_ns = e.dist.mean_ns;
    r.basis = "no production data: the whole prediction (" + ms(e.dist.mean_ns).substr(1) +
              " per call) is new";
  } else if (m && m->count > 0) {
    r.change_known = true;
    r.change_ns = 0;
    r.basis = "measured, no change predicted";
  } else {
    r.basis = "no production data and no prediction: the change is unknown";
  }
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

std::string callersMarkdown(const CallersReport& r) {
  std::string md = "### Callers of `" + r.name + "`\n\nChange per call: " +
                   (r.change_known ? ms(r.change_ns) : std::string("?")) + " (" + r.basis + ")\n\n";
  if (r.callers.empty()) return md + "No caller in the workspace index.\n";
  md += "| caller | file | calls per call | predicted impact |\n|---|---|---|---|\n";
  for (const auto& c : r.callers) {
    char execs[32];
    std::snprintf(execs, sizeof execs, "%.3g", c.executions);
    md += "| `" + c.name + "` | " + std::filesystem::path(c.file).filename().string() + ":" +
          std::to_string(c.range.start.line + 1) + " | " + execs + " | " +
          (r.change_known ? ms(c.impact_ns) : std::string("?")) + " |\n";
  }
  return md;
}

}  // namespace perfhat::index
