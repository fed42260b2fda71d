#include "server/lsp/transport.h"

#include <cerrno>
#include <cstring>

#include <unistd.h>

#include "common/from_chars_whole.h"

namespace perfhat::lsp {
namespace {

constexpr std::string_view kHeaderEnd = "\r\n\r\n";
constexpr std::string_view kContentLength = "content-length";

bool iequalsPrefix(std::string_view s, std::string_view lower_prefix) {
  if (s.size() < lower_prefix.size()) return false;
  for (size_t i = 0; i < lower_prefix.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower_prefix[i]) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Position of the next plausible header start ("Content-Length", any case) at or after `from`.
size_t findHeaderStart(std::string_view data, size_t from) {
  for (size_t i = from; i + kContentLength.size() <= data.size(); ++i) {
    if ((data[i] == 'C' || data[i] == 'c') && iequalsPrefix(data.substr(i), kContentLength)) {
      return i;
    }
  }
  return std::string_view::npos;
}

}  // namespace

void FrameParser::feed(std::string_view bytes) { buffer_.append(bytes); }

void FrameParser::compact() {
  // Drop consumed bytes once they dominate the buffer, keeping appends amortised O(1).
  if (pos_ > 4096 && pos_ * 2 > buffer_.size()) {
    buffer_.erase(0, pos_);
    pos_ = 0;
  }
}

std::optional<Frame> FrameParser::next() {
  std::string_view data(buffer_);
  data.remove_prefix(pos_);
  if (!body_length_) {
    if (data.empty()) return std::nullopt;
    // Resynchronise: anything before a header is garbage (e.g. the tail of a message whose
    // Content-Length was too small).
    size_t start = findHeaderStart(data, 0);
    if (start == std::string_view::npos) {
      // Keep a possible partial "Content-Length" prefix at the very end, drop the rest.
      size_t keep = std::min(data.size(), kContentLength.size() - 1);
      size_t drop = data.size() - keep;
      bool all_whitespace = data.find_first_not_of(" \t\r\n") == std::string_view::npos;
      if (drop > 0 && !all_whitespace) {
        pos_ += drop;
        compact();
        return Frame{
            false, {}, "garbage before header (" + std::to_string(drop) + " bytes skipped)"};
      }
      if (all_whitespace) {
        pos_ += data.size();
        compact();
      }
      return std::nullopt;
    }
    if (start > 0) {
      bool all_whitespace =
          data.substr(0, start).find_first_not_of(" \t\r\n") == std::string_view::npos;
      pos_ += start;
      compact();
      if (!all_whitespace) {
        return Frame{
            false, {}, "garbage before header (" + std::to_string(start) + " bytes skipped)"};
      }
      data.remove_prefix(start);
    }
    size_t end = data.find(kHeaderEnd);
    if (end == std::string_view::npos) {
      if (data.size() > limits_.max_header_bytes) {
        pos_ += kContentLength.size();  // skip this header start and look for the next one
        compact();
        return Frame{false, {}, "header block too long"};
      }
      return std::nullopt;
    }
    std::string_view headers = data.substr(0, end);
    size_t header_block = end + kHeaderEnd.size();
    std::optional<size_t> length;
    std::string error;
    while (!headers.empty()) {
      size_t nl = headers.find("\r\n");
      std::string_view line = headers.substr(0, nl);
      headers = nl == std::string_view::npos ? std::string_view{} : headers.substr(nl + 2);
      size_t colon = line.find(':');
      if (colon == std::string_view::npos) {
        error = "malformed header line";
        break;
      }
      std::string_view name = trim(line.substr(0, colon));
      std::string_view value = trim(line.substr(colon + 1));
      if (name.size() == kContentLength.size() && iequalsPrefix(name, kContentLength)) {
        size_t n = 0;
        if (!fromCharsWhole(value, n)) {
          error = "bad Content-Length '" + std::string(value.substr(0, 32)) + "'";
          break;
        }
        if (n > limits_.max_body_bytes) {
          error = "Content-Length " + std::to_string(n) + " exceeds the limit";
          break;
        }
        length = n;
      }
      // Other headers (Content-Type) are accepted and ignored.
    }
    pos_ += header_block;
    compact();
    if (!error.empty()) return Frame{false, {}, error};
    if (!length) return Frame{false, {}, "missing Content-Length header"};
    body_length_ = *length;
    data = std::string_view(buffer_).substr(pos_);
  }
  if (data.size() < *body_length_) return std::nullopt;
  Frame f{true, std::string(data.substr(0, *body_length_)), {}};
  pos_ += *body_length_;
  body_length_.reset();
  compact();
  return f;
}

std::string encodeFrame(std::string_view body) {
  std::string out = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  out.append(body);
  return out;
}

FdTransport::FdTransport(int in_fd, int out_fd, FramingLimits limits)
    : in_fd_(in_fd), out_fd_(out_fd), parser_(limits) {}

std::optional<Frame> FdTransport::read() {
  for (;;) {
    if (auto f = parser_.next()) return f;
    if (eof_) return std::nullopt;
    char buf[64 * 1024];
    ssize_t n = ::read(in_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      eof_ = true;
      continue;
    }
    parser_.feed(std::string_view(buf, static_cast<size_t>(n)));
  }
}

bool FdTransport::send(std::string_view body) {
  std::string frame = encodeFrame(body);
  MutexLock lock(write_mu_);
  size_t off = 0;
  while (off < frame.size()) {
    ssize_t n = ::write(out_fd_, frame.data() + off, frame.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace perfhat::lsp
