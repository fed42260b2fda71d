// Minimal command-line parsing shared by the sample binaries (--flag and --key value forms).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace agile::cli {

class Args {
 public:
  Args(int argc, char** argv);
  bool flag(const std::string& name);
  std::string value(const std::string& name, const std::string& fallback);
  // Arguments nobody asked for; call after every flag()/value().
  std::vector<std::string> unknown() const;

 private:
  std::vector<std::string> args_;
  std::vector<bool> used_;
};

struct HostPort {
  std::string host;
  int port = 0;
};

std::optional<HostPort> parseHostPort(const std::string& text);
std::optional<long> parseInt(const std::string& text);
std::optional<double> parseDouble(const std::string& text);

}  // namespace agile::cli
