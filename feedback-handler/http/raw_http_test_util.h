// Test helper: a client TCP connection on loopback that writes exactly the bytes it is given
// (headers without their body, bodies a byte at a time) and reads one HTTP/1.1 response, so
// tests can see when the server answers and whether it closes the connection.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include <zlib.h>

namespace perfhat::testing {

struct RawResponse {
  int status = 0;
  std::string head;  // status line and headers
  std::string body;
  std::string header(const std::string& name) const {
    const std::string key = "\r\n" + name + ": ";
    auto p = head.find(key);
    if (p == std::string::npos) return "";
    p += key.size();
    return head.substr(p, head.find("\r\n", p) - p);
  }
};

class RawConnection {
 public:
  // `receive_buffer` > 0 shrinks the socket's receive buffer (and so the TCP window) before
  // connecting, to play a client that reads slowly. `source` (a loopback address such as
  // 127.0.0.2) plays a second peer: per-peer limits count it apart from 127.0.0.1.
  explicit RawConnection(int port, int receive_buffer = 0, const char* source = nullptr) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (receive_buffer > 0) {
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    }
    if (source) {
      sockaddr_in from{};
      from.sin_family = AF_INET;
      ::inet_pton(AF_INET, source, &from.sin_addr);
      if (::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) {
        ::close(fd_);
        throw std::runtime_error("bind to the source address failed");
      }
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd_);
      throw std::runtime_error("connect failed");
    }
  }
  ~RawConnection() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  // False once the server has closed (or reset) the connection.
  bool send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }

  // Reads one response (Content-Length bodies); nullopt when none arrives within `timeout`.
  std::optional<RawResponse> read(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    RawResponse r;
    size_t head_end;
    while ((head_end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (!fill(deadline)) return std::nullopt;
    }
    r.head = buf_.substr(0, head_end + 2);
    buf_.erase(0, head_end + 4);
    r.status = std::atoi(r.head.c_str() + 9);
    const size_t length = std::strtoul(r.header("Content-Length").c_str(), nullptr, 10);
    while (buf_.size() < length) {
      if (!fill(deadline)) return std::nullopt;
    }
    r.body = buf_.substr(0, length);
    buf_.erase(0, length);
    return r;
  }

  // Reads at most `chunk` bytes every `pause` until the server closes the connection or
  // `give_up` passes; returns the bytes read (the server closed when closedByServer() then holds).
  size_t readSlowly(size_t chunk, std::chrono::milliseconds pause,
                    std::chrono::milliseconds give_up) {
    const auto end = std::chrono::steady_clock::now() + give_up;
    size_t total = buf_.size();
    buf_.clear();
    std::string tmp(chunk, '\0');
    while (!eof_ && std::chrono::steady_clock::now() < end) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(pause.count())) > 0) {
        const ssize_t n = ::recv(fd_, tmp.data(), chunk, 0);
        if (n <= 0) {
          eof_ = true;
          break;
        }
        total += static_cast<size_t>(n);
      }
      std::this_thread::sleep_for(pause);
    }
    return total;
  }
  bool closed() const { return eof_; }

  // True when the server closes the connection within `timeout` (after what it sent is read).
  bool closedByServer(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (int i = 0; i < 100000; ++i) {
      if (!fill(deadline)) return eof_;
    }
    return false;
  }

 private:
  bool fill(std::chrono::steady_clock::time_point deadline) {
    if (eof_) return false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    char tmp[65536];
    const ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }

  int fd_ = -1;
  std::string buf_;
  bool eof_ = false;
};

// `decoded` zero bytes, gzip-compressed (about 1000:1): a decompression bomb.
inline std::string gzipZeros(size_t decoded) {
  z_stream z{};
  if (deflateInit2(&z, 9, Z_DEFLATED, 31, 9, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("deflateInit2");
  }
  std::string in(1u << 20, '\0'), out;
  char buf[1u << 16];
  for (size_t left = decoded; left > 0 || z.avail_in > 0;) {
    if (z.avail_in == 0) {
      const size_t n = std::min(left, in.size());
      z.next_in = reinterpret_cast<Bytef*>(in.data());
      z.avail_in = static_cast<uInt>(n);
      left -= n;
    }
    do {
      z.next_out = reinterpret_cast<Bytef*>(buf);
      z.avail_out = sizeof buf;
      deflate(&z, left == 0 ? Z_FINISH : Z_NO_FLUSH);
      out.append(buf, sizeof buf - z.avail_out);
    } while (z.avail_out == 0);
    if (left == 0 && z.avail_in == 0) break;
  }
  deflateEnd(&z);
  return out;
}

}  // namespace perfhat::testing
