#include "server/features/dynamic_text.h"

#include <cmath>

namespace perfhat::features {
namespace {

std::string plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string calls(double n) { return formatCount(n) + (std::llround(n) == 1 ? " call" : " calls"); }

void list(std::string& out, const char* title, const std::vector<NeighbourLink>& v, uint64_t all,
          const DefinitionLink& link, bool markdown) {
  out += markdown ? std::string("**") + title + "**" : std::string(title);
  out += " (" + (v.size() < all ? std::to_string(v.size()) + " of " : std::string()) +
         std::to_string(all) + ")\n";
  if (v.empty()) out += markdown ? "\n- none\n" : "  none\n";
  if (markdown && !v.empty()) out += "\n";
  for (const auto& n : v) {
    std::string name = markdown ? "`" + n.key + "`" : n.key;
    if (markdown && n.definition && link) name = "[" + name + "](" + link(*n.definition) + ")";
    out += (markdown ? "- " : "  ") + name + " — " + calls(n.count) + "\n";
  }
}

}  // namespace

std::string formatWindow(int64_t s) {
  if (s >= 86400 && s % 86400 == 0) return std::to_string(s / 86400) + " d";
  if (s >= 3600 && s % 3600 == 0) return std::to_string(s / 3600) + " h";
  if (s >= 3600) return formatCount(static_cast<double>(s) / 3600) + " h";
  return std::to_string((s + 59) / 60) + " min";
}

std::string dynamicLensTitle(const DynamicLens& l) {
  std::string t =
      l.calls_per_hour ? formatCount(*l.calls_per_hour) + " calls/h" : std::string("calls/h ?");
  if (l.self_p50_ns) t += " · self p50 " + formatDuration(*l.self_p50_ns);
  if (l.demand_rank) t += " · demand #" + std::to_string(*l.demand_rank);
  t += " · " + plural(l.fan_in, "caller", "callers") + " / " +
       plural(l.fan_out, "callee", "callees");
  if (l.stale) t += " · cached";
  return t;
}

CodeLens toCodeLens(const DynamicLens& l) {
  return {l.range, dynamicLensTitle(l), kShowCallGraphCommand, {l.key}};
}

std::string dynamicHoverText(const DynamicHover& h, const DefinitionLink& link, bool markdown) {
  std::string out =
      (markdown ? "**Production call graph**" : std::string("Production call graph")) + " (last " +
      formatWindow(h.window_s) + ", " + calls(h.visits) + ")\n\n";
  list(out, "Callers", h.callers, h.fan_in, link, markdown);
  out += "\n";
  list(out, "Callees", h.callees, h.fan_out, link, markdown);
  return out;
}

Diagnostic toDiagnostic(const NeverCalled& n) {
  return {n.range, Severity::Information, "perfhat.never-called",
          "Not called in production in the last " + formatWindow(n.window_s) +
              " (the function is probed and the service reported throughout)"};
}

}  // namespace perfhat::features
