#include "experiment/measurements.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "experiment/limits.h"

namespace perfhat::experiment {
namespace {

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  s = s.substr(b, e - b + 1);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return s;
}

std::vector<std::string> splitFields(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) out.push_back(trim(field));
  if (!line.empty() && line.back() == ',') out.push_back("");
  return out;
}

[[noreturn]] void fail(const std::string& name, size_t line, const std::string& what) {
  throw InputError(name + ":" + std::to_string(line) + ": " + what);
}

}  // namespace

std::string readBoundedFile(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw InputError(path + ": cannot read: " + ec.message());
  if (size > kMaxInputBytes) {
    throw InputError(path + ": file is " + std::to_string(size) + " bytes; the limit is " +
                     std::to_string(kMaxInputBytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open");
  std::string text;
  text.resize(static_cast<size_t>(size));
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

std::vector<Observation> parseMeasurementsCsv(const std::string& text, const std::string& name) {
  if (text.size() > kMaxInputBytes) fail(name, 1, "input larger than the limit");
  static const std::vector<std::string> required{"participant", "group", "task", "measure",
                                                 "seconds"};
  std::istringstream in(text);
  std::string line;
  size_t lineno = 0;
  std::map<std::string, size_t> column;
  size_t columns = 0;
  std::vector<Observation> rows;
  std::map<std::string, size_t> seen;  // participant|task|measure -> line
  std::map<std::string, std::pair<std::string, size_t>> group_of;  // participant -> group, line
  while (std::getline(in, line)) {
    ++lineno;
    if (trim(line).empty() || line[0] == '#') continue;
    const auto fields = splitFields(line);
    if (column.empty()) {  // the header
      for (size_t i = 0; i < fields.size(); ++i) column[fields[i]] = i;
      for (const auto& r : required) {
        if (!column.count(r)) fail(name, lineno, "missing column '" + r + "' in the header");
      }
      columns = fields.size();
      continue;
    }
    if (rows.size() >= kMaxCsvRows) {
      fail(name, lineno, "more than " + std::to_string(kMaxCsvRows) + " rows");
    }
    if (fields.size() != columns) {
      fail(name, lineno,
           "expected " + std::to_string(columns) + " fields, found " +
               std::to_string(fields.size()));
    }
    Observation o;
    o.line = lineno;
    o.participant = fields[column["participant"]];
    o.group = fields[column["group"]];
    o.task = fields[column["task"]];
    o.measure = fields[column["measure"]];
    for (const std::string* f : {&o.participant, &o.group, &o.task, &o.measure}) {
      if (f->empty()) fail(name, lineno, "empty field");
      if (f->size() > kMaxFieldChars) fail(name, lineno, "field longer than the limit");
    }
    if (o.group != "treatment" && o.group != "control") {
      fail(name, lineno, "unknown group '" + o.group + "' (expected treatment or control)");
    }
    bool known_measure = false;
    for (const auto& m : measureOrder()) known_measure |= m == o.measure;
    if (!known_measure) {
      fail(name, lineno, "unknown measure '" + o.measure + "' (expected total, fe or rca)");
    }
    const std::string& sec = fields[column["seconds"]];
    char* end = nullptr;
    o.seconds = sec.empty() ? NAN : std::strtod(sec.c_str(), &end);
    if (sec.empty() || end != sec.c_str() + sec.size() || !std::isfinite(o.seconds)) {
      fail(name, lineno, "seconds is not a number: '" + sec + "'");
    }
    if (o.seconds < 0) fail(name, lineno, "seconds is negative: " + sec);
    const std::string key = o.participant + "\x1f" + o.task + "\x1f" + o.measure;
    if (auto it = seen.find(key); it != seen.end()) {
      fail(name, lineno,
           "participant " + o.participant + " has a second " + o.task + " " + o.measure +
               " value (first on line " + std::to_string(it->second) + ")");
    }
    seen[key] = lineno;
    auto [g, inserted] = group_of.emplace(o.participant, std::make_pair(o.group, lineno));
    if (!inserted && g->second.first != o.group) {
      fail(name, lineno,
           "participant " + o.participant + " is in group " + o.group + " here but in " +
               g->second.first + " on line " + std::to_string(g->second.second));
    }
    rows.push_back(std::move(o));
  }
  if (column.empty()) fail(name, 1, "no header line (participant,group,task,measure,seconds)");
  if (rows.empty()) fail(name, lineno, "no measurements");
  return rows;
}

}  // namespace perfhat::experiment
