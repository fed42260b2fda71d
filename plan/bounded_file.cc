#include "plan/bounded_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace perfhat::plan {

Result<std::string> readBoundedFile(const std::string& path, std::size_t max_bytes) {
  using Text = Result<std::string>;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Text::failure(path + " is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Text::failure("cannot open " + path + ": " + std::strerror(errno));
  std::string out;
  char buffer[1 << 16];
  while (in) {
    in.read(buffer, sizeof buffer);
    std::size_t got = static_cast<std::size_t>(in.gcount());
    if (out.size() + got > max_bytes)
      return Text::failure(path + " is larger than " + std::to_string(max_bytes) + " bytes");
    out.append(buffer, got);
  }
  if (in.bad()) return Text::failure("cannot read " + path);
  return Text::success(std::move(out));
}

}  // namespace perfhat::plan
