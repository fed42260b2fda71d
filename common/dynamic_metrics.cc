#include "common/dynamic_metrics.h"

#include <algorithm>
#include <charconv>
#include <chrono>

#include <nlohmann/json.hpp>

#include "common/feedback.h"
#include "common/json_parse.h"

namespace perfhat {
namespace {

using nlohmann::json;

std::optional<double> optNumber(const json& j, const char* field) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_number())
    throw FeedbackFormatError(std::string("dynamic: \"") + field + "\" must be a number");
  return it->get<double>();
}

double number(const json& j, const char* field) { return optNumber(j, field).value_or(0); }

bool flag(const json& j, const char* field) {
  auto it = j.find(field);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

uint64_t count(const json& j, const char* field) {
  const double v = number(j, field);
  if (!(v >= 0 && v < 1e15))
    throw FeedbackFormatError(std::string("dynamic: \"") + field + "\" out of range");
  return static_cast<uint64_t>(v);
}

std::vector<DynamicNeighbour> neighbours(const json& j, const char* field) {
  std::vector<DynamicNeighbour> out;
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array())
    throw FeedbackFormatError(std::string("dynamic: \"") + field + "\" must be an array");
  for (const json& e : *it) {
    if (!e.is_object() || !e.contains("key") || !e["key"].is_string()) {
      throw FeedbackFormatError(std::string("dynamic: bad entry in \"") + field + "\"");
    }
    out.push_back({e["key"].get<std::string>(), number(e, "count")});
  }
  return out;
}

// {"from","to"} as seconds; nullopt for null.
std::optional<std::pair<int64_t, int64_t>> span(const json& j, const char* field) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_object())
    throw FeedbackFormatError(std::string("dynamic: \"") + field + "\" must be an object");
  auto at = [&](const char* end) {
    auto v = it->find(end);
    std::optional<int64_t> s;
    if (v != it->end() && v->is_string()) s = parseUtcSeconds(v->get<std::string>());
    if (!s)
      throw FeedbackFormatError(std::string("dynamic: \"") + field + "." + end +
                                "\" must be an RFC 3339 time");
    return *s;
  };
  return std::pair{at("from"), at("to")};
}

// {"p50_ns","mean_ns"} of "self" / "inclusive".
void durations(const json& j, const char* field, std::optional<double>& p50,
               std::optional<double>& mean) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return;
  if (!it->is_object())
    throw FeedbackFormatError(std::string("dynamic: \"") + field + "\" must be an object");
  p50 = optNumber(*it, "p50_ns");
  mean = optNumber(*it, "mean_ns");
}

int digits(std::string_view s, size_t pos, size_t n, bool& ok) {
  int v = 0;
  if (pos + n > s.size()) {
    ok = false;
    return 0;
  }
  auto [p, ec] = std::from_chars(s.data() + pos, s.data() + pos + n, v);
  if (ec != std::errc() || p != s.data() + pos + n) ok = false;
  return v;
}

}  // namespace

std::optional<int64_t> parseUtcSeconds(std::string_view s) {
  bool ok = s.size() >= 20 && s[4] == '-' && s[7] == '-' &&
            (s[10] == 'T' || s[10] == 't' || s[10] == ' ') && s[13] == ':' && s[16] == ':';
  if (!ok) return std::nullopt;
  const int y = digits(s, 0, 4, ok), mo = digits(s, 5, 2, ok), d = digits(s, 8, 2, ok);
  const int h = digits(s, 11, 2, ok), mi = digits(s, 14, 2, ok), se = digits(s, 17, 2, ok);
  if (!ok || h > 23 || mi > 59 || se > 60) return std::nullopt;
  const std::chrono::year_month_day ymd{std::chrono::year(y), std::chrono::month(mo),
                                        std::chrono::day(d)};
  if (!ymd.ok()) return std::nullopt;
  size_t pos = 19;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    while (pos < s.size() && isdigit(static_cast<unsigned char>(s[pos]))) ++pos;
  }
  int64_t offset = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos + 6 == s.size() && (s[pos] == '+' || s[pos] == '-') && s[pos + 3] == ':') {
    const int oh = digits(s, pos + 1, 2, ok), om = digits(s, pos + 4, 2, ok);
    if (!ok || oh > 23 || om > 59) return std::nullopt;
    offset = (s[pos] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  const int64_t days = std::chrono::sys_days(ymd).time_since_epoch().count();
  return days * 86400 + h * 3600 + mi * 60 + se - offset;
}

DynamicMetrics parseDynamicMetrics(std::string_view body) {
  JsonParse parsed = parseJson(body);
  if (!parsed.ok()) throw FeedbackFormatError("dynamic response is " + parsed.error);
  const json& j = parsed.value;
  if (!j.is_object() || !j.contains("key") || !j["key"].is_string()) {
    throw FeedbackFormatError("dynamic response must be an object with a string \"key\"");
  }
  DynamicMetrics m;
  m.key = j["key"].get<std::string>();
  const auto window = span(j, "window");
  if (!window) throw FeedbackFormatError("dynamic: \"window\" missing");
  m.window_from_s = window->first;
  m.window_to_s = window->second;
  if (const auto c = span(j, "coverage")) {
    m.covered_from_s = c->first;
    m.covered_to_s = c->second;
  }
  m.visits = number(j, "visits");
  m.calls_per_hour = optNumber(j, "calls_per_hour");
  m.callers = neighbours(j, "callers");
  m.callees = neighbours(j, "callees");
  m.fan_in = count(j, "fan_in");
  m.fan_out = count(j, "fan_out");
  durations(j, "self", m.self_p50_ns, m.self_mean_ns);
  durations(j, "inclusive", m.inclusive_p50_ns, m.inclusive_mean_ns);
  m.demand_ns = number(j, "demand_ns");
  if (auto r = optNumber(j, "demand_rank"); r && *r >= 1 && *r < 1e15) {
    m.demand_rank = static_cast<uint64_t>(*r);
  }
  m.ranked_functions = count(j, "ranked_functions");
  m.leaf = flag(j, "leaf");
  m.never_called = flag(j, "never_called");
  return m;
}

bool coversWindow(const DynamicMetrics& m) {
  if (!m.covered_from_s || !m.covered_to_s || m.window_to_s <= m.window_from_s) return false;
  const int64_t slack = std::max<int64_t>(300, (m.window_to_s - m.window_from_s) / 20);
  return *m.covered_from_s <= m.window_from_s + slack && *m.covered_to_s >= m.window_to_s - slack;
}

}  // namespace perfhat
