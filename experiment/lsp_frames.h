// LSP base-protocol framing (Content-Length headers) over file descriptors, shared by the
// proxy and the overhead study's client.
#pragma once

#include <cstddef>
#include <string>

namespace perfhat::experiment {

inline constexpr size_t kMaxHeaderBytes = 8192;
inline constexpr size_t kMaxBodyBytes = 256u << 20;

// Buffered reader of Content-Length framed messages from a file descriptor.
class FrameReader {
 public:
  explicit FrameReader(int fd) : fd_(fd) {}
  // The whole frame (headers and body) in `raw`, the body in `body`; false at EOF or on a
  // malformed header (the stream cannot be resynchronised then).
  bool next(std::string& raw, std::string& body);

 private:
  bool fill();
  int get();
  int fd_;
  char buf_[65536];
  size_t pos_ = 0, len_ = 0;
};

// Writes all of `s` (retrying short writes); false on error.
bool writeAll(int fd, const std::string& s);
// "Content-Length: N\r\n\r\n" + body.
std::string frame(const std::string& body);

}  // namespace perfhat::experiment
