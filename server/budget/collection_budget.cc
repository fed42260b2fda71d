#include "server/budget/collection_budget.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace perfhat::collection_budget {
namespace {

using nlohmann::json;

double number(const json& o, const char* name, const std::string& where, double fallback = -1) {
  auto it = o.find(name);
  if (it == o.end()) {
    if (fallback >= 0) return fallback;
    throw StatusError(where + "." + name + " is missing");
  }
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0)
    throw StatusError(where + "." + name + " must be a non-negative number");
  return it->get<double>();
}

std::string text(const json& o, const char* name, const std::string& where) {
  auto it = o.find(name);
  if (it == o.end() || !it->is_string())
    throw StatusError(where + "." + name + " must be a string");
  return it->get<std::string>();
}

bool flag(const json& o, const char* name) {
  auto it = o.find(name);
  return it != o.end() && it->is_boolean() && it->get<bool>();
}

// The pins line's target, as Pins::parse in the library reads it back.
std::string targetOf(const std::string& line) {
  std::istringstream in(line);
  std::string verb, target;
  in >> verb;
  if (verb == "always") {
    std::getline(in >> std::ws, target);
    while (!target.empty() && (target.back() == ' ' || target.back() == '\r')) target.pop_back();
  } else if (verb == "weight") {
    in >> target;
  }
  return verb + " " + target;
}

// Probing mode's stack samples. The handler's copy carries the library's estimates; a status
// file carries the counts and the weight of one sample at the current probe rate.
void readSampled(const json& j, Status& s) {
  const double weight = number(j, "sample_weight_s", "status", 0);
  s.sampling_wall_s = number(j, "sampling_wall_s", "status", 0);
  auto f = j.find("sampled_functions");
  if (f == j.end()) return;
  if (!f->is_array()) throw StatusError("status.sampled_functions must be an array");
  for (std::size_t i = 0; i < f->size(); ++i) {
    const json& e = (*f)[i];
    const std::string where = "status.sampled_functions[" + std::to_string(i) + "]";
    if (!e.is_object()) throw StatusError(where + " must be an object");
    SampledEstimate x;
    x.function = text(e, "function", where);
    x.samples = number(e, "samples", where);
    x.self = number(e, "self", where, 0);
    x.cpu_s = number(e, "estimated_cpu_s", where, x.samples * weight);
    x.self_cpu_s = number(e, "estimated_self_cpu_s", where, x.self * weight);
    s.sampled.push_back(std::move(x));
  }
}

}  // namespace

const SampledEstimate* sampledOf(const Status& s, const std::string& function) {
  const std::string name = qualifiedName(function);
  for (const SampledEstimate& e : s.sampled)
    if (e.function == function || qualifiedName(e.function) == name) return &e;
  return nullptr;
}

json sampledJson(const Status& s) {
  json rows = json::array();
  for (const SampledEstimate& e : s.sampled) {
    json r = {{"function", e.function},
              {"samples", e.samples},
              {"self", e.self},
              {"estimated_cpu_s", e.cpu_s},
              {"estimated_self_cpu_s", e.self_cpu_s},
              {"estimated", "from stack samples"}};
    if (s.sampling_wall_s > 0) r["cpu_per_s"] = e.cpu_s / s.sampling_wall_s;
    rows.push_back(std::move(r));
  }
  return rows;
}

Status parseStatus(const json& j) {
  if (!j.is_object()) throw StatusError("status must be a JSON object");
  Status s;
  s.budget_share = number(j, "budget_share", "status");
  s.detect_ns = number(j, "detect_ns", "status");
  s.report_ns = number(j, "report_ns", "status");
  s.sample_ns = number(j, "sample_ns", "status", 0);
  s.counted_ns = number(j, "counted_ns", "status", 0);
  s.cold_ns = number(j, "cold_ns", "status", 0);
  s.max_probe_hz = number(j, "max_probe_hz", "status", 1000);
  s.min_fraction = number(j, "min_fraction", "status", 0.001);
  budget::Plan& p = s.plan;
  p.probing = j.value("mode", std::string("rates")) == "probing";
  p.allowed_cpu_per_s = number(j, "allowed_cpu_per_s", "status");
  p.process_cpu_per_s = number(j, "process_cpu_per_s", "status");
  p.max_f = number(j, "max_f", "status", 0);
  p.probing_hz = number(j, "probing_hz", "status", 0);
  p.value = number(j, "value", "status", 0);
  p.predicted_overhead = number(j, "predicted_overhead", "status", 0);
  p.measured_overhead = number(j, "measured_overhead", "status", 0);
  p.governor = number(j, "governor", "status", 1);
  p.over_budget = flag(j, "over_budget");
  auto classes = j.find("classes");
  if (classes == j.end() || !classes->is_array())
    throw StatusError("status.classes must be an array");
  for (std::size_t i = 0; i < classes->size(); ++i) {
    const json& c = (*classes)[i];
    const std::string where = "status.classes[" + std::to_string(i) + "]";
    if (!c.is_object()) throw StatusError(where + " must be an object");
    budget::ClassPlan k;
    k.name = text(c, "name", where);
    k.frequency_hz = number(c, "frequency_hz", where);
    k.duty_ratio = number(c, "duty_ratio", where);
    k.weight = number(c, "weight", where, 1);
    k.pinned = flag(c, "pinned");
    k.traced = flag(c, "traced");
    k.detected = !c.contains("detected") || flag(c, "detected");  // older statuses: detected
    k.cold_hz = number(c, "cold_hz", where, 0);
    k.fraction = number(c, "fraction", where, 0);
    k.overhead = number(c, "overhead", where, 0);
    p.classes.push_back(std::move(k));
  }
  readSampled(j, s);
  if (auto f = j.find("functions"); f != j.end() && f->is_array()) {
    for (const json& e : *f) {
      if (e.is_object() && e.contains("function") && e.contains("class") &&
          e["function"].is_string() && e["class"].is_string())
        s.functions.emplace_back(e["function"].get<std::string>(), e["class"].get<std::string>());
    }
  }
  return s;
}

std::string qualifiedName(std::string_view signature) {
  // "double shop::Cart::sum() const" → "shop::Cart::sum": before the parameter list, after the
  // return type (the last space outside template brackets).
  const std::size_t paren = signature.find('(');
  std::string_view head = signature.substr(0, paren);
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < head.size(); ++i) {
    if (head[i] == '<') ++depth;
    if (head[i] == '>') --depth;
    if (head[i] == ' ' && depth == 0) start = i + 1;
  }
  return std::string(head.substr(start));
}

std::string classOf(const Status& s, const std::string& function) {
  const std::string name = qualifiedName(function);
  for (const auto& [fn, klass] : s.functions)
    if (fn == function || qualifiedName(fn) == name) return klass;
  return "";
}

budget::Plan replan(const Status& s, const Change& change) {
  std::vector<budget::ClassPlan> classes = s.plan.classes;
  const std::string klass =
      change.kind == Change::Kind::kAlways ? classOf(s, change.target) : change.target;
  bool found = false;
  for (budget::ClassPlan& k : classes) {
    if (k.name != klass) continue;
    found = true;
    if (change.kind == Change::Kind::kAlways) {
      k.pinned = true;
    } else {
      k.weight = change.weight;
    }
  }
  if (!found) {
    throw StatusError(change.kind == Change::Kind::kAlways
                          ? "the budget status lists no class for function " + change.target
                          : "the budget status has no class " + change.target);
  }
  budget::Plan p =
      budget::solvePlan(std::move(classes), s.plan.allowed_cpu_per_s, s.plan.process_cpu_per_s,
                        budget::Costs{s.detect_ns * 1e-9, s.report_ns * 1e-9, s.counted_ns * 1e-9,
                                      s.sample_ns * 1e-9, s.cold_ns * 1e-9},
                        s.plan.probing, s.max_probe_hz, s.min_fraction);
  p.governor = s.plan.governor;
  p.measured_overhead = s.plan.measured_overhead;
  return p;
}

json planJson(const budget::Plan& p) {
  json classes = json::array();
  for (const budget::ClassPlan& k : p.classes) {
    classes.push_back({{"name", k.name},
                       {"frequency_hz", k.frequency_hz},
                       {"duty_ratio", k.duty_ratio},
                       {"weight", k.weight},
                       {"pinned", k.pinned},
                       {"traced", k.traced},
                       {"sampled", !k.traced},
                       {"detected", k.detected},
                       {"cold_hz", k.cold_hz},
                       {"fraction", k.fraction},
                       {"overhead", k.overhead}});
  }
  return {{"mode", p.probing ? "probing" : "rates"},
          {"predicted_overhead", p.predicted_overhead},
          {"measured_overhead", p.measured_overhead},
          {"over_budget", p.over_budget},
          {"max_f", p.max_f},
          {"probing_hz", p.probing_hz},
          {"value", p.value},
          {"classes", std::move(classes)}};
}

std::string pinLine(const Change& change) {
  const std::string& t = change.target;
  if (t.empty() || t.find_first_of("\n\r#") != std::string::npos)
    throw StatusError("a pin target is one line without '#': " + t.substr(0, 80));
  if (change.kind == Change::Kind::kAlways) return "always " + t;
  if (t.find_first_of(" \t") != std::string::npos)
    throw StatusError("a class name in the pins file has no spaces: " + t);
  if (!(change.weight >= 0 && change.weight <= 1e9))
    throw StatusError("a class weight is in [0, 1e9]");
  std::ostringstream w;
  w << change.weight;
  return "weight " + t + " " + w.str();
}

void writePin(const std::string& path, const Change& change) {
  const std::string line = pinLine(change);
  const std::string target = targetOf(line);
  std::string out;
  {
    std::ifstream in(path);  // a missing file starts empty
    std::string l;
    while (std::getline(in, l)) {
      std::string body = l.substr(0, l.find('#'));
      if (!body.empty() && targetOf(body) == target) continue;  // replaced below
      out += l + "\n";
    }
  }
  if (out.empty()) out = "# perfhat collection-budget pins (docs/collection-budget.md)\n";
  out += line + "\n";
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << out;
    if (!(f.flush())) throw std::runtime_error("cannot write the pins file " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot replace the pins file " + path);
  }
}

}  // namespace perfhat::collection_budget
