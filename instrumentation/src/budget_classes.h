// Event classes of the collection budget, defined over probe sites with the Tigris vocabulary:
// by namespace (a scope glob), by kind of probe, or by a Tigris group (a TigrisDSL expression
// over the sites' phase-1 metrics, e.g. "most frequent").
//
//   PERFHAT_BUDGET_CLASSES="db=ns:agile::Db::*; http=kind:request; hot=group:most frequent@2;
//   rest=*"
//
// Rules are separated by ';', each `name=selector[@weight]`; a site belongs to the first rule it
// matches. Selectors: ns:GLOB (the site's qualified function name; '*' any run, '?' one char),
// kind:function|scope|request, group:TIGRIS, * (every site). Sites no rule matches form one
// class per namespace (also the default with no rules at all).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tigris_dsl.h"

namespace perfhat::budget {

struct ClassRule {
  enum class Kind { kNamespace, kProbeKind, kGroup, kAll } kind = Kind::kAll;
  std::string name;
  std::string pattern;                  // kNamespace: glob; kProbeKind: function|scope|request
  std::shared_ptr<tigris::Node> group;  // kGroup
  double weight = 1;
};

struct ClassRules {
  std::vector<ClassRule> rules;
  std::string error;  // "rule 2 ('db'): ..." when the text is refused (rules are then empty)
  static ClassRules parse(std::string_view text);
};

// What a rule is matched against.
struct SiteFacts {
  std::string qualified;  // "agile::Db::get" (from __PRETTY_FUNCTION__)
  int kind = 0;           // detail::SiteKind: 0 function, 1 scope, 2 request
};

// "void agile::Db::get(const std::string&) const" -> "agile::Db::get"; "ns::f<int>(int)" ->
// "ns::f<int>". Plain names come back unchanged.
std::string qualifiedName(std::string_view pretty);
// "agile::Db::get" -> "agile::Db"; a name without "::" -> "(global)".
std::string namespaceOf(std::string_view qualified);

// Index of the rule `site` matches, or -1. group_members[r][i] says whether site i is in rule
// r's Tigris group (empty for other rules).
long matchRule(const ClassRules& rules, const SiteFacts& site,
               const std::vector<bool>& in_group_per_rule);

}  // namespace perfhat::budget
