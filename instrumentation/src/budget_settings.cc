// The collection budget's settings from the environment, and the pins file's grammar.
#include <cstdlib>
#include <sstream>
#include <string>

#include "budget_controller.h"

namespace perfhat::budget {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

constexpr std::size_t kMaxPinLines = 1000;

}  // namespace

Settings Settings::from_env() {
  Settings s;
  const std::string share = env("PERFHAT_BUDGET");
  if (share.empty()) return s;
  char* end = nullptr;
  double v = std::strtod(share.c_str(), &end);
  if (*end != '\0' || !(v > 0) || !(v < 1)) {
    s.error = "PERFHAT_BUDGET '" + share + "' is not a CPU share in (0, 1) (0.01 for 1 %)";
    return s;
  }
  s.enabled = true;
  s.planner.budget_share = v;
  const std::string mode = env("PERFHAT_BUDGET_MODE");
  if (mode == "probing") {
    s.planner.probing = true;
  } else if (!mode.empty() && mode != "rates") {
    s.error = "PERFHAT_BUDGET_MODE '" + mode + "' is rates or probing";
    s.enabled = false;
    return s;
  }
  const std::string windows = env("PERFHAT_BUDGET_WINDOWS");
  if (!windows.empty()) {
    long n = std::strtol(windows.c_str(), &end, 10);
    if (*end != '\0' || n < 1 || n > 3600) {
      s.error = "PERFHAT_BUDGET_WINDOWS '" + windows + "' is a count of 1 s windows in [1, 3600]";
      s.enabled = false;
      return s;
    }
    s.planner.windows = static_cast<std::size_t>(n);
  }
  s.classes = env("PERFHAT_BUDGET_CLASSES");
  s.pins_file = env("PERFHAT_BUDGET_PINS");
  s.status_file = env("PERFHAT_BUDGET_STATUS");
  return s;
}

Pins Pins::parse(std::string_view text) {
  Pins p;
  std::size_t line_no = 0;
  while (!text.empty() && line_no < kMaxPinLines) {
    std::size_t nl = text.find('\n');
    std::string line(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    if (std::size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream in(line);
    std::string verb;
    if (!(in >> verb)) continue;
    if (verb == "always") {
      std::string glob;
      std::getline(in >> std::ws, glob);
      while (!glob.empty() && (glob.back() == ' ' || glob.back() == '\r')) glob.pop_back();
      if (glob.empty()) {
        p.error = "line " + std::to_string(line_no) + ": always needs a function pattern";
        continue;
      }
      p.always.push_back(glob);
    } else if (verb == "weight") {
      std::string klass;
      double w = -1;
      if (!(in >> klass >> w) || !(w >= 0) || w > 1e9) {
        p.error = "line " + std::to_string(line_no) + ": weight CLASS W, W in [0, 1e9]";
        continue;
      }
      p.weights[klass] = w;
    } else {
      p.error = "line " + std::to_string(line_no) + ": '" + verb + "' is always or weight";
    }
  }
  return p;
}

}  // namespace perfhat::budget
