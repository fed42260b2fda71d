// Value parsing shared by the sample binaries; their flags go through CLI11 (common/cli.h).
#pragma once

#include <optional>
#include <string>

namespace agile::cli {

struct HostPort {
  std::string host;
  int port = 0;
};

std::optional<HostPort> parseHostPort(const std::string& text);
std::optional<long> parseInt(const std::string& text);
std::optional<double> parseDouble(const std::string& text);

}  // namespace agile::cli
