#include "plan/bounded_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace perfhat::plan {

bool readBoundedFile(const std::string& path, std::size_t max_bytes, std::string& out,
                     std::string& error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    error = path + " is a directory, not a file";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  out.clear();
  char buffer[1 << 16];
  while (in) {
    in.read(buffer, sizeof buffer);
    std::size_t got = static_cast<std::size_t>(in.gcount());
    if (out.size() + got > max_bytes) {
      error = path + " is larger than " + std::to_string(max_bytes) + " bytes";
      return false;
    }
    out.append(buffer, got);
  }
  if (in.bad()) {
    error = "cannot read " + path;
    return false;
  }
  return true;
}

}  // namespace perfhat::plan
