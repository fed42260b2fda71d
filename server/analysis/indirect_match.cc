// Matcher::matchIndirect: a call through a function pointer, a member-function pointer or a
// `std::function` matched from production's call-site data of its caller (indirect_calls.h says
// how). The matching half of indirect calls; the walk's half, which finds such calls, is
// indirect_calls.cc.
#include <unordered_set>

#include "common/function_key.h"
#include "server/analysis/indirect_calls.h"
#include "server/analysis/matching.h"

namespace perfhat::analysis {

namespace {

// Functions production attributes to a caller without a call as written: special members and
// operators the compiler calls (constructors, destructors, conversions, range-for's iterator
// operators). A function pointer may point at none of them except a functor's `operator()`.
bool calledImplicitly(const std::string& key) {
  const std::string name = qualifiedName(key);
  const size_t sep = name.rfind("::");
  const std::string last = sep == std::string::npos ? name : name.substr(sep + 2);
  if (last.rfind("operator", 0) == 0) return last != "operator()";
  if (!last.empty() && last[0] == '~') return true;
  if (sep == std::string::npos) return false;
  const std::string scope = name.substr(0, sep);
  const size_t scope_sep = scope.rfind("::");
  return (scope_sep == std::string::npos ? scope : scope.substr(scope_sep + 2)) == last;
}

}  // namespace

MatchResult Matcher::matchIndirect(const FunctionInfo& caller, const Node& call) const {
  if (caller.key.empty()) return {};
  // What the caller calls as written, and the members its virtual calls reach: theirs.
  std::unordered_set<std::string> direct, virtual_members;
  for (const Node& n : caller.nodes) {
    if (n.kind != NodeKind::Call || n.call.key.empty()) continue;
    direct.insert(n.call.key);
    if (n.call.is_virtual) virtual_members.insert(memberSignature(n.call.key));
  }
  // The caller as production knew it: its key, or the instantiations its definition matched.
  std::unordered_set<std::string> callers{caller.key};
  for (const MatchedPart& m : caller.matched) callers.insert(normalizeFunctionKey(m.key));
  std::vector<const FeedbackItem*> ran;
  CallSiteStats site;
  site.caller = caller.key;
  for (const FeedbackItem* item : view_.all()) {
    const std::string key = normalizeFunctionKey(item->key);
    // The caller's own lambdas are left out too: an inlined algorithm (`std::sort(…, [](…){…})`)
    // calls them with the caller on the stack. One called through a `std::function` of the
    // same function then stays unknown rather than taking another's cost.
    if (direct.count(key) || calledImplicitly(key) || virtual_members.count(memberSignature(key)) ||
        key.rfind(caller.key + "::lambda", 0) == 0)
      continue;
    if (!call.call.params.empty()) {
      const std::string params = parameterListOf(key);
      if (!params.empty() && params != call.call.params) continue;
    }
    for (const CallSiteStats& c : item->callsites) {
      auto n = normalized_callers_.find(c.caller);
      if (n == normalized_callers_.end())
        n = normalized_callers_.emplace(c.caller, normalizeFunctionKey(c.caller)).first;
      if (!callers.count(n->second)) continue;
      addCallSite(site, c);
      ran.push_back(item);
      break;
    }
  }
  if (ran.empty()) return {};
  auto owned = std::make_shared<FeedbackItem>(aggregateItems(ran));
  owned->key = call.call.name;
  owned->callsites = {site};
  // Reported as the virtual calls' kind: implementations called from here, by call-site data.
  MatchResult r{owned.get(), owned, MatchKind::Virtual};
  r.parts = std::move(ran);
  return r;
}

}  // namespace perfhat::analysis
