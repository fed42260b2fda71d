// LSP base protocol: `Content-Length` framing over a byte stream (stdio or pipes).
//
// FrameParser is a pure, incremental state machine (bytes in, message bodies or framing errors
// out), so split reads, several messages per read and garbage between messages are handled in
// one place and can be fuzzed. FdTransport wraps it around a pair of file descriptors.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "common/thread_annotations.h"

namespace perfhat::lsp {

struct FramingLimits {
  size_t max_header_bytes = 8 * 1024;         // a header block longer than this is garbage
  size_t max_body_bytes = 256 * 1024 * 1024;  // refuse absurd Content-Length values
};

// One event from the stream: a complete message body, or a framing error (with a reason) after
// which the parser has resynchronised on the next header it can find.
struct Frame {
  bool ok = true;
  std::string body;   // when ok
  std::string error;  // when !ok
};

class FrameParser {
 public:
  explicit FrameParser(FramingLimits limits = {}) : limits_(limits) {}
  void feed(std::string_view bytes);
  // The next complete frame, or nullopt when more bytes are needed.
  std::optional<Frame> next();
  // Bytes received but not yet consumed (a partial header or body).
  size_t buffered() const { return buffer_.size() - pos_; }

 private:
  void compact();
  FramingLimits limits_;
  std::string buffer_;
  size_t pos_ = 0;                     // start of unconsumed data in buffer_
  std::optional<size_t> body_length_;  // set once a header block was parsed
};

// "Content-Length: N\r\n\r\n" + body.
std::string encodeFrame(std::string_view body);

// Blocking transport over file descriptors. read() is called from one thread; send() may be
// called from any thread (writes are serialised so frames never interleave).
class FdTransport {
 public:
  FdTransport(int in_fd, int out_fd, FramingLimits limits = {});
  // Blocks until a frame is available; nullopt at end of input or on a read error.
  std::optional<Frame> read();
  // False when the peer is gone.
  bool send(std::string_view body);

 private:
  int in_fd_;
  int out_fd_;
  FrameParser parser_;
  Mutex write_mu_;  // one message on out_fd_ at a time
  bool eof_ = false;
};

}  // namespace perfhat::lsp
