#include "server/analysis/matching.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <re2/re2.h>

#include "common/function_key.h"

namespace perfhat::analysis {

bool sameSourceFile(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  if (a == b) return true;
  const std::string& longer = a.size() > b.size() ? a : b;
  const std::string& shorter = a.size() > b.size() ? b : a;
  if (longer.compare(longer.size() - shorter.size(), shorter.size(), shorter) != 0) return false;
  return shorter.front() == '/' || longer[longer.size() - shorter.size() - 1] == '/';
}

FeedbackItem aggregateItems(const std::vector<const FeedbackItem*>& items) {
  FeedbackItem out;
  if (items.empty()) return out;
  out.key = qualifiedName(normalizeFunctionKey(items.front()->key));
  Stats s;
  s.min_ns = std::numeric_limits<double>::infinity();
  double weight = 0;
  bool any = false;
  double size_w = 0;
  SizeStats size;
  for (const FeedbackItem* it : items) {
    for (const auto& c : it->callsites) out.callsites.push_back(c);
    for (const auto& v : it->versions)
      if (std::find(out.versions.begin(), out.versions.end(), v) == out.versions.end())
        out.versions.push_back(v);
    for (const auto& h : it->hosts)
      if (std::find(out.hosts.begin(), out.hosts.end(), h) == out.hosts.end())
        out.hosts.push_back(h);
    if (it->result_size && it->result_size->count > 0) {
      double w = static_cast<double>(it->result_size->count);
      size.mean += w * it->result_size->mean;
      size.p90 += w * it->result_size->p90;
      size.max = std::max(size.max, it->result_size->max);
      size.count += it->result_size->count;
      size_w += w;
    }
    if (!it->stats) continue;
    const Stats& x = *it->stats;
    double w = static_cast<double>(std::max<uint64_t>(x.count, 1));
    any = true;
    s.count += x.count;
    s.errors += x.errors;
    s.mean_ns += w * x.mean_ns;
    s.p50_ns += w * x.p50_ns;
    s.p90_ns += w * x.p90_ns;
    s.p95_ns += w * x.p95_ns;
    s.p99_ns += w * x.p99_ns;
    s.min_ns = std::min(s.min_ns, x.min_ns);
    s.max_ns = std::max(s.max_ns, x.max_ns);
    s.rate_per_s += x.rate_per_s;
    if (s.window.from.empty() || (!x.window.from.empty() && x.window.from < s.window.from))
      s.window.from = x.window.from;
    if (x.window.to > s.window.to) s.window.to = x.window.to;
    weight += w;
  }
  if (any) {
    s.mean_ns /= weight;
    s.p50_ns /= weight;
    s.p90_ns /= weight;
    s.p95_ns /= weight;
    s.p99_ns /= weight;
    out.stats = s;
  }
  if (size_w > 0) {
    size.mean /= size_w;
    size.p90 /= size_w;
    out.result_size = size;
  }
  return out;
}

Matcher::Matcher(const FeedbackView& view, const AnalysisOptions& options)
    : view_(view), options_(options) {
  for (const auto& r : options_.rules) {
    if (r.function_regex.empty()) continue;
    // One that does not compile was already reported by parseAnalysisOptions.
    if (auto re = compileFunctionRegex(r.function_regex))
      regex_rules_.emplace_back(&r, std::move(re.value));
  }
}

namespace {
MatchResult single(const FeedbackItem* item, MatchKind how) {
  MatchResult r{item, nullptr, how};
  r.parts.push_back(item);
  return r;
}
}  // namespace

MatchResult Matcher::byRules(const std::string& key) const {
  for (const auto& r : options_.rules) {
    if (r.function.empty()) continue;
    bool hit = false;
    std::string_view f = r.function;
    if (f.size() >= 5 && f.substr(f.size() - 5) == "(...)") {
      hit = qualifiedName(key) == qualifiedName(normalizeFunctionKey(f.substr(0, f.size() - 5)));
    } else {
      hit = normalizeFunctionKey(f) == key;
    }
    if (hit)
      if (const FeedbackItem* item = view_.find(r.span)) return single(item, MatchKind::Rule);
  }
  for (const auto& [rule, re] : regex_rules_) {
    if (re2::RE2::FullMatch(key, *re))
      if (const FeedbackItem* item = view_.find(rule->span)) return single(item, MatchKind::Rule);
  }
  return {};
}

MatchResult Matcher::match(const std::string& key, const std::string& mangled) const {
  if (key.empty() && mangled.empty()) return {};
  if (!key.empty())
    if (const FeedbackItem* item = view_.find(key)) return single(item, MatchKind::Exact);
  if (!mangled.empty())
    if (const FeedbackItem* item = view_.find(mangled)) return single(item, MatchKind::Mangled);
  if (key.empty()) return {};
  if (MatchResult r = byRules(key)) return r;
  auto q = qualified_cache_.find(key);
  if (q == qualified_cache_.end()) q = qualified_cache_.emplace(key, qualifiedName(key)).first;
  auto overloads = view_.findByName(q->second);
  if (overloads.size() == 1) return single(overloads.front(), MatchKind::Name);
  if (overloads.size() > 1) {
    auto owned = std::make_shared<FeedbackItem>(aggregateItems(overloads));
    MatchResult r{owned.get(), owned, MatchKind::Overloads};
    r.parts = std::move(overloads);
    return r;
  }
  return {};
}

namespace {
// A key without its template argument lists: `ns::Queue<int>::Queue(const ns::Queue<int> &)` →
// `ns::Queue::Queue(const ns::Queue &)`, the same as for `ns::Queue<E>`'s implicit copy
// constructor.
std::string withoutTemplateArguments(std::string_view key) {
  std::string out;
  int depth = 0;
  for (char c : key) {
    if (c == '<')
      ++depth;
    else if (c == '>' && depth > 0)
      --depth;
    else if (depth == 0)
      out.push_back(c);
  }
  return out;
}
}  // namespace

MatchResult Matcher::matchImplicit(const FunctionInfo& fn) const {
  MatchResult r = match(fn.key, fn.mangled);
  if (!r || (r.how != MatchKind::Name && r.how != MatchKind::Overloads)) return r;
  // By name, an implicit member would take its siblings' data (the default constructor the copy
  // constructor's): only the same member, of any instantiation of the class, counts.
  const std::string erased = withoutTemplateArguments(fn.key);
  std::vector<const FeedbackItem*> same;
  for (const FeedbackItem* part : r.parts)
    if (withoutTemplateArguments(normalizeFunctionKey(part->key)) == erased) same.push_back(part);
  if (same.empty()) return {};
  if (same.size() == 1) return single(same.front(), MatchKind::Name);
  auto owned = std::make_shared<FeedbackItem>(aggregateItems(same));
  MatchResult out{owned.get(), owned, MatchKind::Overloads};
  out.parts = std::move(same);
  return out;
}

void addCallSite(CallSiteStats& sum, const CallSiteStats& c) {
  // Counts and calls per call of the caller add, latencies are count-weighted.
  const double w = static_cast<double>(c.count), total = static_cast<double>(sum.count) + w;
  if (total > 0) {
    sum.mean_ns = (sum.mean_ns * static_cast<double>(sum.count) + c.mean_ns * w) / total;
    sum.p50_ns = (sum.p50_ns * static_cast<double>(sum.count) + c.p50_ns * w) / total;
    sum.p90_ns = (sum.p90_ns * static_cast<double>(sum.count) + c.p90_ns * w) / total;
    sum.p99_ns = (sum.p99_ns * static_cast<double>(sum.count) + c.p99_ns * w) / total;
  }
  sum.count += c.count;
  sum.calls_per_parent += c.calls_per_parent;
  sum.caller_rate_per_s = std::max(sum.caller_rate_per_s, c.caller_rate_per_s);
  if (!sum.caller_input_size) sum.caller_input_size = c.caller_input_size;
}

MatchResult Matcher::matchVirtual(const std::string& caller, const std::string& callee) const {
  const std::string member = memberSignature(callee);
  if (member.empty() || caller.empty()) return {};
  std::vector<const FeedbackItem*> ran;
  CallSiteStats site;
  site.caller = caller;
  for (const FeedbackItem* item : view_.all()) {
    if (memberSignature(item->key) != member) continue;
    for (const CallSiteStats& c : item->callsites) {
      auto n = normalized_callers_.find(c.caller);
      if (n == normalized_callers_.end())
        n = normalized_callers_.emplace(c.caller, normalizeFunctionKey(c.caller)).first;
      if (n->second != caller) continue;
      addCallSite(site, c);
      ran.push_back(item);
      break;
    }
  }
  if (ran.empty()) return {};
  auto owned = std::make_shared<FeedbackItem>(aggregateItems(ran));
  owned->key = callee;
  owned->callsites = {site};
  MatchResult r{owned.get(), owned, MatchKind::Virtual};
  r.parts = std::move(ran);
  return r;
}

MatchResult Matcher::matchDefinition(const FunctionInfo& fn) const {
  if (fn.implicit) return matchImplicit(fn);  // no body, no lines of its own: no file+line layer
  if (MatchResult r = match(fn.key, fn.mangled)) return r;
  // File + line: the runtime's code.file.path / code.line.number inside the definition; the
  // closest line to the start wins (a probe sits at the top of the function).
  const FeedbackItem* best = nullptr;
  int best_distance = std::numeric_limits<int>::max();
  for (const FeedbackItem* item : view_.all()) {
    if (item->line <= 0 || !sameSourceFile(item->file, fn.file)) continue;
    int line0 = item->line - 1;
    if (line0 < fn.range.start.line || line0 > fn.range.end.line) continue;
    int d = line0 - fn.range.start.line;
    if (d < best_distance) {
      best = item;
      best_distance = d;
    }
  }
  if (best) return single(best, MatchKind::FileLine);
  return {};
}

}  // namespace perfhat::analysis
