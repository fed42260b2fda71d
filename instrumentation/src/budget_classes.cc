#include "budget_classes.h"

#include <cstdlib>

#include "tigris.h"

namespace perfhat::budget {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

constexpr std::size_t kMaxRules = 256;

}  // namespace

ClassRules ClassRules::parse(std::string_view text) {
  ClassRules out;
  std::size_t number = 0;
  auto fail = [&](std::string_view name, const std::string& why) {
    out.rules.clear();
    out.error = "rule " + std::to_string(number) + " ('" + std::string(name) + "'): " + why;
    return out;
  };
  while (!text.empty()) {
    std::size_t semi = text.find(';');
    std::string_view item = trim(text.substr(0, semi));
    text = semi == std::string_view::npos ? std::string_view{} : text.substr(semi + 1);
    if (item.empty()) continue;
    ++number;
    if (number > kMaxRules) return fail("", "more than 256 rules");
    std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) return fail(item, "expected name=selector");
    ClassRule r;
    r.name = std::string(trim(item.substr(0, eq)));
    std::string_view sel = trim(item.substr(eq + 1));
    if (r.name.empty()) return fail(r.name, "empty class name");
    for (const ClassRule& prev : out.rules)
      if (prev.name == r.name) return fail(r.name, "class named twice");
    if (std::size_t at = sel.rfind('@'); at != std::string_view::npos) {
      std::string w(trim(sel.substr(at + 1)));
      char* end = nullptr;
      r.weight = std::strtod(w.c_str(), &end);
      if (w.empty() || *end != '\0' || !(r.weight >= 0) || r.weight > 1e9)
        return fail(r.name, "weight '" + w + "' is not a number in [0, 1e9]");
      sel = trim(sel.substr(0, at));
    }
    if (sel == "*") {
      r.kind = ClassRule::Kind::kAll;
    } else if (sel.substr(0, 3) == "ns:") {
      r.kind = ClassRule::Kind::kNamespace;
      r.pattern = std::string(trim(sel.substr(3)));
      if (r.pattern.empty()) return fail(r.name, "ns: needs a pattern");
    } else if (sel.substr(0, 5) == "kind:") {
      r.kind = ClassRule::Kind::kProbeKind;
      r.pattern = std::string(trim(sel.substr(5)));
      if (r.pattern != "function" && r.pattern != "scope" && r.pattern != "request")
        return fail(r.name, "kind: is function, scope or request, not '" + r.pattern + "'");
    } else if (sel.substr(0, 6) == "group:") {
      r.kind = ClassRule::Kind::kGroup;
      auto parsed = tigris::parse(trim(sel.substr(6)));
      if (!parsed) return fail(r.name, "group: " + parsed.error->to_string());
      r.group = std::shared_ptr<tigris::Node>(std::move(parsed.root));
    } else {
      return fail(r.name, "selector '" + std::string(sel) +
                              "' is none of ns:GLOB, kind:KIND, group:TIGRIS, *");
    }
    out.rules.push_back(std::move(r));
  }
  return out;
}

std::string qualifiedName(std::string_view pretty) {
  // The name ends at the '(' of the parameter list: the first '(' outside template brackets.
  int angle = 0;
  std::size_t end = pretty.size();
  for (std::size_t i = 0; i < pretty.size(); ++i) {
    char c = pretty[i];
    if (c == '<') ++angle;
    if (c == '>' && angle > 0) --angle;
    if (c == '(' && angle == 0) {
      // "operator()" keeps its own parentheses.
      if (i >= 8 && pretty.substr(i - 8, 8) == "operator" && i + 1 < pretty.size() &&
          pretty[i + 1] == ')') {
        ++i;
        continue;
      }
      end = i;
      break;
    }
  }
  std::string_view head = pretty.substr(0, end);
  // The return type ends at the last space outside template brackets.
  angle = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < head.size(); ++i) {
    char c = head[i];
    if (c == '<') ++angle;
    if (c == '>' && angle > 0) --angle;
    if (c == ' ' && angle == 0) start = i + 1;
  }
  return std::string(trim(head.substr(start)));
}

std::string namespaceOf(std::string_view q) {
  int angle = 0;
  std::size_t last = std::string_view::npos;
  for (std::size_t i = 0; i + 1 < q.size(); ++i) {
    if (q[i] == '<') ++angle;
    if (q[i] == '>' && angle > 0) --angle;
    if (angle == 0 && q[i] == ':' && q[i + 1] == ':') last = i;
  }
  return last == std::string_view::npos ? "(global)" : std::string(q.substr(0, last));
}

long matchRule(const ClassRules& rules, const SiteFacts& site,
               const std::vector<bool>& in_group_per_rule) {
  static constexpr const char* kKinds[] = {"function", "scope", "request"};
  for (std::size_t r = 0; r < rules.rules.size(); ++r) {
    const ClassRule& rule = rules.rules[r];
    bool hit = false;
    switch (rule.kind) {
      case ClassRule::Kind::kAll:
        hit = true;
        break;
      case ClassRule::Kind::kNamespace:
        hit = tigris::glob_match(rule.pattern, site.qualified);
        break;
      case ClassRule::Kind::kProbeKind:
        hit = site.kind >= 0 && site.kind < 3 && rule.pattern == kKinds[site.kind];
        break;
      case ClassRule::Kind::kGroup:
        hit = r < in_group_per_rule.size() && in_group_per_rule[r];
        break;
    }
    if (hit) return static_cast<long>(r);
  }
  return -1;
}

}  // namespace perfhat::budget
