#include "experiment/lsp_frames.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace perfhat::experiment {

bool FrameReader::next(std::string& raw, std::string& body) {
  raw.clear();
  size_t length = 0;
  bool have_length = false;
  for (;;) {  // header lines
    std::string line;
    for (;;) {
      int c = get();
      if (c < 0) return false;
      raw += static_cast<char>(c);
      if (c == '\n') break;
      line += static_cast<char>(c);
      if (raw.size() > kMaxHeaderBytes) return false;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) break;
    static const char kLen[] = "content-length:";
    std::string lower = line;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    if (lower.rfind(kLen, 0) == 0) {
      length = std::strtoull(line.c_str() + sizeof kLen - 1, nullptr, 10);
      have_length = true;
    }
  }
  if (!have_length || length > kMaxBodyBytes) return false;
  body.clear();
  while (body.size() < length) {
    if (pos_ == len_ && !fill()) return false;
    const size_t n = std::min(length - body.size(), len_ - pos_);
    body.append(buf_ + pos_, n);
    pos_ += n;
  }
  raw += body;
  return true;
}

bool FrameReader::fill() {
  ssize_t n;
  do n = ::read(fd_, buf_, sizeof buf_);
  while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  pos_ = 0;
  len_ = static_cast<size_t>(n);
  return true;
}
int FrameReader::get() {
  if (pos_ == len_ && !fill()) return -1;
  return static_cast<unsigned char>(buf_[pos_++]);
}

bool writeAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

std::string frame(const std::string& body) {
  return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace perfhat::experiment
