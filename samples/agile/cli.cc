#include "samples/agile/cli.h"

#include <cerrno>
#include <cstdlib>

namespace agile::cli {

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
