#include "server/analysis/snapshot.h"

namespace perfhat::analysis {

const Node* Snapshot::nodeAt(Position p, const FunctionInfo** owner) const {
  const Node* best = nullptr;
  const FunctionInfo* best_owner = nullptr;
  // a lies within b.
  auto within = [](const Range& a, const Range& b) {
    return !(a.start < b.start) && !(b.end < a.end);
  };
  for (const auto& fn : functions) {
    if (!fn.range.contains(p)) continue;
    for (const auto& node : fn.nodes) {
      if (!node.range.contains(p)) continue;
      // Innermost: the candidate whose range lies within the current best (ties: later node,
      // which is deeper in pre-order).
      if (!best || within(node.range, best->range)) {
        best = &node;
        best_owner = &fn;
      }
    }
  }
  if (owner) *owner = best_owner;
  return best;
}

}  // namespace perfhat::analysis
