#include "plan/classes_file.h"

#include <cmath>
#include <set>

#include "common/json_parse.h"
#include "plan/bounded_file.h"

namespace perfhat::plan {
namespace {

constexpr int kMaxClassFileDepth = 8;  // [ { "field": value } ] needs 2, {"classes": …} 3

std::string numberText(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// "class "file" (#2)" or "class #2" while the name is unknown.
std::string classLabel(std::size_t index, const std::string& name) {
  if (name.empty()) return "class #" + std::to_string(index + 1);
  return "class \"" + name + "\" (#" + std::to_string(index + 1) + ")";
}

// Reads field `key` as a number in [lo, hi]; returns "" or the problem.
std::string readNumber(const nlohmann::json& obj, const char* key, bool required, double lo,
                       double hi, const char* range_text, double& out) {
  auto it = obj.find(key);
  if (it == obj.end()) return required ? "missing" : "";
  if (!it->is_number()) return std::string("must be a number, got ") + it->type_name();
  double v = it->get<double>();
  if (!std::isfinite(v)) return "must be a finite number";
  if (v < lo || v > hi) return std::string("must be ") + range_text + ", got " + numberText(v);
  out = v;
  return "";
}

}  // namespace

ClassFile parseClassFile(std::string_view text) {
  ClassFile r;
  JsonParse parsed = parseJson(text, kMaxClassFileDepth);
  if (!parsed.ok()) {
    r.error = "class file: " + parsed.error;
    return r;
  }
  const nlohmann::json* list = &parsed.value;
  if (list->is_object()) {
    auto it = list->find("classes");
    if (it == list->end()) {
      r.error = "class file: expected an array of classes or {\"classes\": [...]}";
      return r;
    }
    list = &*it;
  }
  if (!list->is_array()) {
    r.error = "class file: expected an array of classes, got " + std::string(list->type_name());
    return r;
  }
  if (list->empty()) {
    r.error = "class file: no classes";
    return r;
  }
  if (list->size() > kMaxClasses) {
    r.error = "class file: " + std::to_string(list->size()) + " classes, at most " +
              std::to_string(kMaxClasses) + " are allowed";
    return r;
  }
  static const std::set<std::string> kFields = {"name", "frequency_hz", "duty_ratio", "weight",
                                                "min_rate_hz"};
  std::set<std::string> names;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const nlohmann::json& obj = (*list)[i];
    EventClass c;
    auto fail = [&](const std::string& field, const std::string& problem) {
      r.error = classLabel(i, c.name) + ": field \"" + field + "\": " + problem;
      r.classes.clear();
      return r;
    };
    if (!obj.is_object()) return fail("(class)", "must be an object");
    auto name = obj.find("name");
    if (name == obj.end()) return fail("name", "missing");
    if (!name->is_string()) return fail("name", "must be a string");
    std::string n = name->get<std::string>();
    if (n.empty()) return fail("name", "must not be empty");
    if (n.size() > kMaxClassNameBytes)
      return fail("name", "longer than " + std::to_string(kMaxClassNameBytes) + " bytes");
    c.name = n;
    if (!names.insert(n).second) return fail("name", "duplicate class name");
    for (const auto& [key, value] : obj.items())
      if (!kFields.count(key)) return fail(key, "unknown field");
    std::string p;
    if (!(p = readNumber(obj, "frequency_hz", true, 0, kMaxFrequencyHz, "in (0, 1e9] Hz",
                         c.frequency_hz))
             .empty())
      return fail("frequency_hz", p);
    if (c.frequency_hz <= 0) return fail("frequency_hz", "must be greater than 0");
    if (!(p = readNumber(obj, "duty_ratio", true, 0, 1, "in [0, 1]", c.duty_ratio)).empty())
      return fail("duty_ratio", p);
    if (!(p = readNumber(obj, "weight", false, 0, kMaxWeight, "in [0, 1e9]", c.weight)).empty())
      return fail("weight", p);
    if (!(p = readNumber(obj, "min_rate_hz", false, 0, c.frequency_hz, "in [0, frequency_hz]",
                         c.min_rate_hz))
             .empty())
      return fail("min_rate_hz", p);
    r.classes.push_back(std::move(c));
  }
  return r;
}

ClassFile readClassFile(const std::string& path) {
  return parseBoundedFile(path, kMaxClassFileBytes, parseClassFile);
}

}  // namespace perfhat::plan
