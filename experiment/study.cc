#include "experiment/study.h"

#include <filesystem>
#include <set>

#include "experiment/limits.h"
#include "experiment/measurements.h"

namespace perfhat::experiment {
namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw InputError(path + ": " + what);
}

std::string requireString(const json& obj, const char* field, const std::string& path,
                          const std::string& where) {
  if (!obj.contains(field) || !obj[field].is_string() || obj[field].get<std::string>().empty()) {
    fail(path, where + ": '" + field + "' must be a non-empty string");
  }
  std::string v = obj[field].get<std::string>();
  if (v.size() > kMaxFieldChars * 16) fail(path, where + ": '" + field + "' is too long");
  return v;
}

std::string optionalString(const json& obj, const char* field) {
  return obj.contains(field) && obj[field].is_string() ? obj[field].get<std::string>() : "";
}

// The objects of the study's array `name`, each read by `read(entry, where)` (where: "tasks[2]",
// the place its errors name), whose ids must be unique ("duplicate <noun> id").
template <class Read>
auto readEntries(const json& doc, const char* name, const char* noun, const std::string& path,
                 Read read) {
  const json& a = doc.at(name);
  std::vector<decltype(read(a, std::string()))> out;
  std::set<std::string> ids;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string where = std::string(name) + "[" + std::to_string(i) + "]";
    if (!a[i].is_object()) fail(path, where + " must be an object");
    auto entry = read(a[i], where);
    if (!ids.insert(entry.id).second) fail(path, where + ": duplicate " + noun + " id " + entry.id);
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

std::vector<std::string> StudyTask::measures() const {
  if (type == "performance") return {"total", "fe", "rca"};
  return {"total"};
}

Study parseStudy(const std::string& text, const std::string& path) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    fail(path, std::string("not valid JSON: ") + e.what());
  }
  if (!doc.is_object()) fail(path, "the study must be a JSON object");
  Study s;
  s.source = doc;
  s.name = doc.value("name", std::string("unnamed study"));
  if (doc.contains("skill_scale")) {
    const json& sc = doc["skill_scale"];
    if (!sc.is_array() || sc.size() != 2 || !sc[0].is_number_integer() ||
        !sc[1].is_number_integer() || sc[0].get<int>() >= sc[1].get<int>()) {
      fail(path, "'skill_scale' must be [min, max] integers with min < max");
    }
    s.skill_min = sc[0].get<int>();
    s.skill_max = sc[1].get<int>();
  }
  const std::filesystem::path base = std::filesystem::path(path).parent_path();
  if (doc.contains("sample")) {
    if (!doc["sample"].is_string()) fail(path, "'sample' must be a folder (string)");
    const auto dir = base / doc["sample"].get<std::string>();
    if (!std::filesystem::is_directory(dir)) {
      fail(path, "sample folder " + dir.string() + " does not exist");
    }
    s.sample = dir.lexically_normal().string();
    s.sample_path = dir.lexically_normal().filename().string();
  }
  s.sample_path = doc.value("sample_path", s.sample_path);
  if (s.sample_path.find("..") != std::string::npos || s.sample_path.rfind('/', 0) == 0) {
    fail(path, "'sample_path' must be a relative path inside the task folder");
  }
  s.compile_flags = doc.value("compile_flags", "");

  if (!doc.contains("tasks") || !doc["tasks"].is_array() || doc["tasks"].empty()) {
    fail(path, "'tasks' must be a non-empty array");
  }
  s.tasks = readEntries(doc, "tasks", "task", path, [&](const json& t, const std::string& where) {
    StudyTask task;
    task.id = requireString(t, "id", path, where);
    task.type = requireString(t, "type", path, where + " (" + task.id + ")");
    if (task.type != "performance" && task.type != "regular") {
      fail(path, where + " (" + task.id + "): type '" + task.type +
                     "' is not 'performance' or 'regular'");
    }
    task.briefing = requireString(t, "briefing", path, where + " (" + task.id + ")");
    const auto brief = base / task.briefing;
    if (!std::filesystem::is_regular_file(brief)) {
      fail(path, where + " (" + task.id + "): briefing " + brief.string() + " does not exist");
    }
    task.briefing = brief.lexically_normal().string();
    task.function = optionalString(t, "function");
    task.culprit = optionalString(t, "culprit");
    return task;
  });

  if (!doc.contains("participants") || !doc["participants"].is_array() ||
      doc["participants"].size() < 2) {
    fail(path, "'participants' must be an array of at least 2 participants");
  }
  if (doc["participants"].size() > kMaxParticipants) {
    fail(path, "more than " + std::to_string(kMaxParticipants) + " participants");
  }
  s.participants = readEntries(
      doc, "participants", "participant", path, [&](const json& p, const std::string& where) {
        Participant part;
        part.id = requireString(p, "id", path, where);
        const std::string who = where + " (" + part.id + ")";
        if (!p.contains("experience_years") || !p["experience_years"].is_number() ||
            p["experience_years"].get<double>() < 0 || p["experience_years"].get<double>() > 80) {
          fail(path, who + ": 'experience_years' must be a number from 0 to 80");
        }
        part.experience_years = p["experience_years"].get<double>();
        if (!p.contains("performance_skill") || !p["performance_skill"].is_number_integer() ||
            p["performance_skill"].get<int>() < s.skill_min ||
            p["performance_skill"].get<int>() > s.skill_max) {
          fail(path, who + ": 'performance_skill' must be an integer from " +
                         std::to_string(s.skill_min) + " to " + std::to_string(s.skill_max));
        }
        part.performance_skill = p["performance_skill"].get<int>();
        return part;
      });
  return s;
}

Study loadStudy(const std::string& path) { return parseStudy(readBoundedFile(path), path); }

}  // namespace perfhat::experiment
