#include "plan/units_file.h"

#include <unordered_set>

#include "plan/bounded_file.h"

namespace perfhat::plan {
namespace {

std::string_view trim(std::string_view s) {
  const char* ws = " \t\r\v\f";
  std::size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

}  // namespace

UnitsFile parseUnits(std::string_view text) {
  UnitsFile r;
  if (std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    r.error = "units file looks binary (NUL byte at offset " + std::to_string(nul) +
              "); expected one function key a line";
    return r;
  }
  std::unordered_set<std::string_view> seen;
  std::size_t line_no = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    ++line_no;
    std::string_view line = trim(text.substr(pos, end - pos));
    pos = end + 1;
    if (line.empty() || line.front() == '#') continue;
    if (line.size() > kMaxUnitKeyBytes) {
      r.error = "units file line " + std::to_string(line_no) + ": key longer than " +
                std::to_string(kMaxUnitKeyBytes) + " bytes";
      r.units.clear();
      return r;
    }
    if (seen.insert(line).second) r.units.emplace_back(line);
  }
  if (r.units.empty()) r.error = "units file holds no function keys";
  return r;
}

UnitsFile readUnitsFile(const std::string& path) {
  return parseBoundedFile(path, kMaxUnitsFileBytes, parseUnits);
}

}  // namespace perfhat::plan
