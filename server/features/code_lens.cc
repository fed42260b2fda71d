// textDocument/codeLens: one line above every function with its production figures, and for a
// changed function the predicted change, so clients without inlay hints (Neovim 0.7) get both.
#include <string>
#include <vector>

#include "server/features/exposure_text.h"
#include "server/features/feature_util.h"
#include "server/features/hint_text.h"

namespace perfhat::features {

std::vector<CodeLens> codeLenses(const Snapshot& s, const Options& o) {
  std::vector<CodeLens> out;
  for (const analysis::FunctionInfo& f : s.functions) {
    if (f.nodes.empty()) continue;
    const analysis::Node& root = f.root();
    const detail::NodeValue v = detail::valueOf(root, o);
    const bool measured = root.measured && root.measured->count > 0;
    const std::vector<std::string> args = {f.key};

    CodeLens lens{f.name_range, "", "perfhat.showData", args};
    if (measured) {
      lens.title = "prod " + detail::statsSummary(*root.measured, o);
      if (root.exposure) lens.title += " · " + exposureSummary(*root.exposure);
      if (s.stale) lens.title += " · cached";
    } else if (root.exposure && unprobed(*root.exposure)) {
      lens.title = "perfhat: " + unprobedText(*root.exposure);
    } else if (v.ns) {
      lens.title = "predicted " + detail::statLabel(o) + " ~" +
                   detail::valueWithUnknown(*v.ns, root.estimate) + " · no production data";
    } else {
      lens.title = "perfhat: no production data";
    }
    out.push_back(lens);

    if (!f.changed || !measured) continue;
    CodeLens delta{f.name_range, "", "perfhat.showData", args};
    if (!v.ns) {
      delta.title = "predicted ? (new code without data)";
    } else {
      const double now = detail::pick(*root.measured, o);
      const double d = *v.ns - now;
      delta.title = "predicted " + std::string(d >= 0 ? "+" : "") + formatDuration(d);
      if (now > 0) delta.title += " (" + formatPercent(d / now) + ")";
    }
    out.push_back(delta);
  }
  return out;
}

}  // namespace perfhat::features
