#include "samples/agile/cli.h"

#include <cerrno>
#include <cstdlib>

namespace agile::cli {

Args::Args(int argc, char** argv) : args_(argv + 1, argv + argc), used_(args_.size(), false) {}

bool Args::flag(const std::string& name) {
  for (size_t i = 0; i < args_.size(); ++i) {
    if (args_[i] == name) {
      used_[i] = true;
      return true;
    }
  }
  return false;
}

std::string Args::value(const std::string& name, const std::string& fallback) {
  for (size_t i = 0; i < args_.size(); ++i) {
    if (args_[i] == name && i + 1 < args_.size()) {
      used_[i] = used_[i + 1] = true;
      return args_[i + 1];
    }
    if (args_[i].rfind(name + "=", 0) == 0) {
      used_[i] = true;
      return args_[i].substr(name.size() + 1);
    }
  }
  return fallback;
}

std::vector<std::string> Args::unknown() const {
  std::vector<std::string> result;
  for (size_t i = 0; i < args_.size(); ++i) {
    if (!used_[i]) result.push_back(args_[i]);
  }
  return result;
}

std::optional<long> parseInt(const std::string& text) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return std::nullopt;
  return value;
}

std::optional<double> parseDouble(const std::string& text) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (errno != 0 || *end != '\0') return std::nullopt;
  return value;
}

std::optional<HostPort> parseHostPort(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  const auto port = parseInt(text.substr(colon + 1));
  if (!port || *port < 0 || *port > 65535) return std::nullopt;
  return HostPort{text.substr(0, colon), int(*port)};
}

}  // namespace agile::cli
