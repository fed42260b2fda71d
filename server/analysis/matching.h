// Specification (paper §IV-A, DESIGN §3): attaches production data to a function or a callee.
// Layers, first hit wins: exact key → mangled name → user rules → qualified name when the
// overload set has one member (else aggregated across overloads, marked "overloads") →
// definition file + line (definitions only).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/analysis/feedback_view.h"
#include "server/analysis/options.h"
#include "server/analysis/snapshot.h"

namespace perfhat::analysis {

struct MatchResult {
  const FeedbackItem* item = nullptr;   // into the view, or into `owned` when aggregated
  std::shared_ptr<FeedbackItem> owned;  // set for "overloads"
  MatchKind how = MatchKind::None;
  std::vector<const FeedbackItem*> parts;  // the view's items behind `item` (one unless merged)
  explicit operator bool() const { return item != nullptr; }
};

class Matcher {
 public:
  // Rules' regular expressions are compiled once here (invalid ones are skipped: options
  // parsing already rejects them with a clear error naming the rule).
  Matcher(const FeedbackView& view, const AnalysisOptions& options);

  // A callee or producer, known by key and mangled name.
  MatchResult match(const std::string& key, const std::string& mangled) const;
  // A virtual call in `caller` (a key): the implementations of `callee`'s member signature that
  // production's call-site data shows were called from `caller`, merged into one item whose one
  // call site is theirs from `caller` added up ("virtual"; `parts` lists the implementations).
  MatchResult matchVirtual(const std::string& caller, const std::string& callee) const;
  // A call through a function pointer, `std::function` or member-function pointer in `caller`
  // (`Node::call.indirect`): the functions production ran from `caller` that it calls nowhere
  // as written and whose parameters fit, merged like matchVirtual (indirect_calls.cc).
  MatchResult matchIndirect(const FunctionInfo& caller, const Node& call) const;
  // A definition in the document: also tries the file + line layer.
  MatchResult matchDefinition(const FunctionInfo& fn) const;

 private:
  MatchResult byRules(const std::string& key) const;
  MatchResult matchImplicit(const FunctionInfo& fn) const;
  const FeedbackView& view_;
  const AnalysisOptions& options_;
  std::vector<std::pair<const MatchRule*, std::shared_ptr<const re2::RE2>>> regex_rules_;
  // A Matcher lives for one analysis; callees repeat (qualifiedName is string work).
  mutable std::unordered_map<std::string, std::string> qualified_cache_;
  mutable std::unordered_map<std::string, std::string> normalized_callers_;
};

// Merges items of several overloads / instantiations into one: counts and errors add, means
// are count-weighted, min/max combine; percentiles are count-weighted averages, an
// approximation that is why such a match is marked "overloads".
FeedbackItem aggregateItems(const std::vector<const FeedbackItem*>& items);

// Adds one call site to a sum of call sites of one caller: counts and calls per call of the
// caller add, latencies are count-weighted.
void addCallSite(CallSiteStats& sum, const CallSiteStats& c);

// True when two paths name the same file: equal, or one is a suffix of the other at a `/`
// (runtimes report build-machine paths, the editor has workspace paths).
bool sameSourceFile(const std::string& a, const std::string& b);

}  // namespace perfhat::analysis
