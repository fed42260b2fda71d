// The measurements of a study: one CSV row per participant, task and measure
// (columns participant,group,task,measure,seconds; any order, extra columns ignored).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace perfhat::experiment {

// Bad input; what() names the file and line ("FILE:LINE: ..."). The CLI exits with code 2.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Observation {
  std::string participant;
  std::string group;    // "treatment" or "control"
  std::string task;     // e.g. "T2"
  std::string measure;  // "total", "fe" or "rca"
  double seconds = 0;
  size_t line = 0;  // 1-based line in the file
};

// Reads a whole file of at most kMaxInputBytes; InputError when it is missing or too large.
std::string readBoundedFile(const std::string& path);

// Parses and validates; `name` is used in error messages. Throws InputError.
std::vector<Observation> parseMeasurementsCsv(const std::string& text, const std::string& name);

inline const std::vector<std::string>& measureOrder() {
  static const std::vector<std::string> order{"total", "fe", "rca"};
  return order;
}

}  // namespace perfhat::experiment
