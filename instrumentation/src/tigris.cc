#include "tigris.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "stats.h"

namespace perfhat::tigris {

Bindings Bindings::defaults() {
  Bindings b;
  b.set(Criterion::kFrequent, {std::string(metric::kInvocationFrequency), true});
  b.set(Criterion::kExpensive, {std::string(metric::kExecutionTime), true});
  b.set(Criterion::kChangeable, {std::string(metric::kComputationPattern), false});
  b.set(Criterion::kUsagePattern, {std::string(metric::kUserBehavior), true});
  b.set(Criterion::kErrorProne, {std::string(metric::kErrorLevel), true});
  b.set(Criterion::kConcurrent, {std::string(metric::kConcurrencyLevel), true});
  b.set(Criterion::kLatent, {std::string(metric::kInterArrivalTime), true});
  return b;
}

bool Grouping::selects(size_t i, Modifier m, bool cumulative) const {
  int g = group[i];
  switch (m) {
    case Modifier::kNone:
      return g == 2;
    case Modifier::kMost:
      return g == 4;
    case Modifier::kLeast:
      return g == 0;
    case Modifier::kMore:
      return cumulative ? g >= 3 : g == 3;
    case Modifier::kLess:
      return cumulative ? g <= 1 : g == 1;
  }
  return false;
}

Grouping group_values(const std::vector<double>& values, const GroupingOptions& opt) {
  Grouping out;
  out.group.assign(values.size(), 2);
  if (values.empty()) return out;
  auto [mn, mx] = std::minmax_element(values.begin(), values.end());
  if (*mn == *mx) {
    // No spread: nothing ranks higher or lower than anything else; all average.
    out.method = GroupingMethod::kDegenerate;
    return out;
  }
  out.ks_p = stats::ks_normality_p(values);
  bool normal = values.size() >= opt.min_points_for_normality && out.ks_p > opt.ks_alpha;
  if (normal) {
    out.method = GroupingMethod::kSigmaBands;
    stats::Welford w;
    for (double v : values) w.add(v);
    double mu = w.mean, sd = w.stddev();
    for (size_t i = 0; i < values.size(); ++i) {
      double v = values[i];
      int g = 2;
      if (v < mu - opt.k_outer * sd)
        g = 0;
      else if (v < mu - opt.k_inner * sd)
        g = 1;
      else if (v > mu + opt.k_outer * sd)
        g = 4;
      else if (v > mu + opt.k_inner * sd)
        g = 3;
      out.group[i] = g;
    }
    return out;
  }
  out.method = GroupingMethod::kQuantiles;
  double q1 = stats::quantile(values, 0.25), q3 = stats::quantile(values, 0.75);
  std::vector<double> lowq, upq;
  for (double v : values) {
    if (v <= q1) lowq.push_back(v);
    if (v >= q3) upq.push_back(v);
  }
  double lo_med = stats::median(lowq), up_med = stats::median(upq);
  for (size_t i = 0; i < values.size(); ++i) {
    double v = values[i];
    int g = 2;
    if (v < lo_med)
      g = 0;
    else if (v <= q1)
      g = 1;
    else if (v > up_med)
      g = 4;
    else if (v >= q3)
      g = 3;
    out.group[i] = g;
  }
  return out;
}

namespace {

struct Evaluator {
  const std::vector<EventMetrics>& events;
  const Bindings& bindings;
  const GroupingOptions& opt;
  ClassifyResult& result;

  const Grouping* grouping_for(const Binding& b) {
    std::string key = b.metric + (b.higher_is_more ? "" : "#inverted");
    auto it = result.groupings.find(key);
    if (it != result.groupings.end()) return &it->second;
    std::vector<double> values;
    values.reserve(events.size());
    for (const auto& e : events) {
      auto m = e.metrics.find(b.metric);
      double v = m == e.metrics.end() ? 0.0 : m->second;
      values.push_back(b.higher_is_more ? v : -v);
    }
    return &result.groupings.emplace(key, group_values(values, opt)).first->second;
  }

  std::vector<bool> eval(const Node& n) {
    if (n.kind == Node::Kind::kLeaf) {
      std::vector<bool> s(events.size(), false);
      const auto& b = bindings.get(n.criterion);
      const Grouping* g = grouping_for(*b);
      for (size_t i = 0; i < events.size(); ++i) s[i] = g->selects(i, n.modifier, opt.cumulative);
      return s;
    }
    auto a = eval(*n.lhs);
    auto b = eval(*n.rhs);
    for (size_t i = 0; i < a.size(); ++i) {
      switch (n.op) {
        case Op::kUnion:
          a[i] = a[i] || b[i];
          break;
        case Op::kIntersect:
          a[i] = a[i] && b[i];
          break;
        case Op::kMinus:
          a[i] = a[i] && !b[i];
          break;
      }
    }
    return a;
  }
};

}  // namespace

ClassifyResult classify(const Node& filter, const std::vector<EventMetrics>& events,
                        const Bindings& bindings, const GroupingOptions& opt) {
  ClassifyResult r;
  unsigned used = criteria_used(filter);
  for (int c = 0; c < kCriterionCount; ++c) {
    if ((used & (1u << c)) && !bindings.by_criterion[c]) {
      r.error = "criterion '" + std::string(to_string(static_cast<Criterion>(c))) +
                "' is used by the filter but bound to no metric";
      r.relevant.assign(events.size(), false);
      return r;
    }
  }
  Evaluator ev{events, bindings, opt, r};
  r.relevant = ev.eval(filter);
  return r;
}

bool glob_match(std::string_view p, std::string_view t) {
  // Iterative matcher with single-star backtracking: O(|p|*|t|) worst case, no recursion.
  size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
      ++pi;
      ++ti;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = ti;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

bool Scope::admits(std::string_view name) const {
  for (const auto& d : deny) {
    if (glob_match(d, name)) return false;
  }
  if (allow.empty()) return true;
  for (const auto& a : allow) {
    if (glob_match(a, name)) return true;
  }
  return false;
}

Scope Scope::parse(std::string_view spec) {
  Scope s;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t end = spec.find(',', start);
    if (end == std::string_view::npos) end = spec.size();
    std::string_view item = spec.substr(start, end - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) {
      if (item.front() == '-')
        s.deny.emplace_back(item.substr(1));
      else if (item.front() == '+')
        s.allow.emplace_back(item.substr(1));
      else
        s.allow.emplace_back(item);
    }
    start = end + 1;
  }
  return s;
}

namespace {
// Splits one CSV record starting at `pos`; returns false at end of input.
bool next_record(std::string_view text, size_t& pos, std::vector<std::string>& fields,
                 std::string& error) {
  fields.clear();
  if (pos >= text.size()) return false;
  std::string cur;
  bool quoted = false, any = false;
  while (pos < text.size()) {
    char c = text[pos++];
    any = true;
    if (quoted) {
      if (c == '"') {
        if (pos < text.size() && text[pos] == '"') {
          cur += '"';
          ++pos;
        } else {
          quoted = false;
        }
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(std::move(cur));
      cur.clear();
    } else if (c == '\n') {
      break;
    } else if (c != '\r') {
      cur += c;
    }
  }
  if (quoted) error = "unterminated quoted field";
  if (any) fields.push_back(std::move(cur));
  return any;
}
}  // namespace

StaticMetrics parse_static_metrics_csv(std::string_view text) {
  StaticMetrics out;
  size_t pos = 0;
  std::vector<std::string> header, row;
  std::string err;
  if (!next_record(text, pos, header, err) || header.size() < 2) {
    out.error = "line 1: expected a header 'Name,<metric>,...'";
    return out;
  }
  if (!err.empty()) {
    out.error = "line 1: " + err;
    return out;
  }
  size_t line = 1;
  while (next_record(text, pos, row, err)) {
    ++line;
    if (!err.empty()) {
      out.error = "line " + std::to_string(line) + ": " + err;
      return out;
    }
    if (row.size() == 1 && row[0].empty()) continue;  // blank line
    if (row.size() != header.size()) {
      out.error = "line " + std::to_string(line) + ": expected " + std::to_string(header.size()) +
                  " fields, found " + std::to_string(row.size());
      return out;
    }
    auto& metrics = out.by_name[row[0]];
    for (size_t i = 1; i < row.size(); ++i) {
      const char* b = row[i].c_str();
      char* e = nullptr;
      double v = std::strtod(b, &e);
      if (e != b && *e == '\0' && std::isfinite(v)) metrics[header[i]] = v;
    }
  }
  return out;
}

}  // namespace perfhat::tigris
