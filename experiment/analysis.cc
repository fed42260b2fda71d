#include "experiment/analysis.h"

#include <algorithm>
#include <map>

#include "experiment/limits.h"
#include "experiment/statistics.h"

namespace perfhat::experiment {
namespace {

struct Cell {
  std::vector<double> treatment, control;
  size_t first_line = 0;
  std::vector<size_t> treatment_lines, control_lines;
};

// T2 before T10: shorter ids first, then alphabetical.
bool taskLess(const std::string& a, const std::string& b) {
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

size_t measureIndex(const std::string& m) {
  const auto& order = measureOrder();
  return static_cast<size_t>(std::find(order.begin(), order.end(), m) - order.begin());
}

std::string lineList(const std::vector<size_t>& lines) {
  std::string s;
  for (size_t l : lines) s += (s.empty() ? "" : ", ") + std::to_string(l);
  return s;
}

}  // namespace

nlohmann::ordered_json analyse(const std::vector<Observation>& rows, const std::string& name) {
  auto cellLess = [](const std::pair<std::string, std::string>& a,
                     const std::pair<std::string, std::string>& b) {
    if (a.first != b.first) return taskLess(a.first, b.first);
    return measureIndex(a.second) < measureIndex(b.second);
  };
  std::map<std::pair<std::string, std::string>, Cell, decltype(cellLess)> cells(cellLess);
  for (const auto& o : rows) {
    Cell& c = cells[{o.task, o.measure}];
    if (!c.first_line) c.first_line = o.line;
    if (o.group == "treatment") {
      c.treatment.push_back(o.seconds);
      c.treatment_lines.push_back(o.line);
    } else {
      c.control.push_back(o.seconds);
      c.control_lines.push_back(o.line);
    }
  }
  using json = nlohmann::ordered_json;
  json results = json::array();
  for (const auto& [id, c] : cells) {
    for (const auto& [group, values, lines] :
         {std::tuple{"treatment", &c.treatment, &c.treatment_lines},
          std::tuple{"control", &c.control, &c.control_lines}}) {
      if (values->size() < kMinGroupValues) {
        const size_t at = lines->empty() ? c.first_line : lines->front();
        throw InputError(name + ":" + std::to_string(at) + ": task " + id.first + " measure " +
                         id.second + ": group " + group + " has " + std::to_string(values->size()) +
                         " value(s)" + (lines->empty() ? "" : " (lines " + lineList(*lines) + ")") +
                         "; at least " + std::to_string(kMinGroupValues) + " are needed");
      }
    }
    const Descriptives t = describe(c.treatment), k = describe(c.control);
    const ShapiroResult st = shapiroWilk(c.treatment), sc = shapiroWilk(c.control);
    const MannWhitneyResult mw = mannWhitneyU(c.treatment, c.control);
    const EffectSize es = effectSize(c.treatment, c.control);
    json r;
    r["task"] = id.first;
    r["measure"] = id.second;
    r["n"] = {{"treatment", t.n}, {"control", k.n}};
    r["mean"] = {{"treatment", t.mean}, {"control", k.mean}};
    r["sd"] = {{"treatment", t.sd}, {"control", k.sd}};
    r["shapiro"] = {{"treatment", {{"W", st.w}, {"p", st.p}}},
                    {"control", {{"W", sc.w}, {"p", sc.p}}}};
    r["mann_whitney"] = {{"U", mw.u}, {"p", mw.p}, {"method", mw.exact ? "exact" : "asymptotic"}};
    r["cliffs_delta"] = {{"value", es.cliffs_delta}, {"magnitude", es.magnitude}};
    r["a12"] = es.a12;
    results.push_back(std::move(r));
  }
  return json{{"results", std::move(results)}};
}

}  // namespace perfhat::experiment
