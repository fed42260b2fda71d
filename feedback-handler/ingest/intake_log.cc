#include "feedback-handler/ingest/intake_log.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/crc32.h"
#include "feedback-handler/store/sqlite.h"  // StoreError

namespace perfhat::handler {
namespace {

constexpr size_t kHeader = 8;               // u32 length, u32 CRC
constexpr size_t kPayloadPrefix = 8 + 4;    // i64 id, i32 format
constexpr uint32_t kMaxPayload = 1u << 30;  // far above any accepted request body

[[noreturn]] void fail(const std::string& what, const std::string& path, int err) {
  throw StoreError("intake log " + path + ": " + what + ": " + std::strerror(err));
}

uint32_t crcOf(const char* prefix, size_t prefix_len, std::string_view body) {
  return crc32(body, crc32(std::string_view(prefix, prefix_len)));
}

void syncDirectoryOf(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::filesystem::path dir = parent.empty() ? std::filesystem::path(".") : parent;
  int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (d < 0) return;  // best effort: the entry is synced with the directory's next sync anyway
  ::fsync(d);
  ::close(d);
}

}  // namespace

IntakeLog::IntakeLog(std::string path) : path_(std::move(path)) {
  const bool existed = ::access(path_.c_str(), F_OK) == 0;
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) fail("cannot open", path_, errno);
  // One writer: a second handler on the same store would append over this one's records and
  // empty the file under it. The lock goes with the process (also on kill -9).
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK) {
      throw StoreError("intake log " + path_ +
                       " is in use by another process: is a perfhat-handler already running "
                       "on this store?");
    }
    fail("cannot lock", path_, err);
  }
  // A new file's directory entry must be durable before the first acknowledged append.
  if (!existed) syncDirectoryOf(path_);
}

IntakeLog::~IntakeLog() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

// Reads all of `fd` (from offset 0).
std::string readAll(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail("cannot stat", path, errno);
  std::string data(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < data.size()) {
    ssize_t n = ::pread(fd, data.data() + got, data.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("cannot read", path, errno);
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  data.resize(got);
  return data;
}

struct Parsed {
  std::vector<IntakeRecord> records;  // ids above `after`
  size_t valid = 0;                   // bytes of complete records
  int64_t last = 0;                   // highest id seen (or `after`)
};

// Complete records up to the first torn or corrupt one.
Parsed parse(const std::string& data, int64_t after) {
  Parsed out;
  out.last = after;
  size_t pos = 0;
  while (data.size() - pos >= kHeader) {
    uint32_t len, crc;
    std::memcpy(&len, data.data() + pos, 4);
    std::memcpy(&crc, data.data() + pos + 4, 4);
    if (len < kPayloadPrefix || len > kMaxPayload || len > data.size() - pos - kHeader) break;
    const char* payload = data.data() + pos + kHeader;
    std::string_view body(payload + kPayloadPrefix, len - kPayloadPrefix);
    if (crcOf(payload, kPayloadPrefix, body) != crc) break;
    IntakeRecord r;
    int32_t format;
    std::memcpy(&r.id, payload, 8);
    std::memcpy(&format, payload + 8, 4);
    r.format = format;
    out.last = std::max(out.last, r.id);
    if (r.id > after) {
      r.body = std::string(body);
      out.records.push_back(std::move(r));
    }
    pos += kHeader + len;
  }
  out.valid = pos;
  return out;
}

}  // namespace

std::vector<IntakeRecord> IntakeLog::recover(int64_t after) {
  const std::string data = readAll(fd_, path_);
  Parsed p = parse(data, after);
  if (p.valid < data.size()) {
    // Torn tail: an append cut short by the crash, never acknowledged. Appends start after it.
    std::fprintf(stderr,
                 "perfhat-handler: intake log %s: dropped %zu bytes of an unfinished append\n",
                 path_.c_str(), data.size() - p.valid);
    if (::ftruncate(fd_, static_cast<off_t>(p.valid)) != 0) fail("cannot truncate", path_, errno);
  }
  size_ = static_cast<int64_t>(p.valid);
  last_id_ = p.last;
  return std::move(p.records);
}

std::vector<IntakeRecord> IntakeLog::peek(const std::string& path, int64_t after) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return {};
    fail("cannot open", path, errno);
  }
  std::string data;
  try {
    data = readAll(fd, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return parse(data, after).records;
}

int64_t IntakeLog::append(const std::vector<IntakeBody>& bodies) {
  // One header (length, CRC, id, format) per body; the bodies are written from where they are.
  struct Header {
    char bytes[kHeader + kPayloadPrefix];
  };
  std::vector<Header> headers(bodies.size());
  std::vector<iovec> iov;
  iov.reserve(2 * bodies.size());
  int64_t id = last_id_;
  size_t total = 0;
  for (size_t i = 0; i < bodies.size(); ++i) {
    const IntakeBody& b = bodies[i];
    if (b.bytes.size() > kMaxPayload - kPayloadPrefix) {
      throw StoreError("intake log: request body too large to log");
    }
    char* h = headers[i].bytes;
    const int64_t rid = ++id;
    const auto format = static_cast<int32_t>(b.format);
    const auto len = static_cast<uint32_t>(kPayloadPrefix + b.bytes.size());
    std::memcpy(h + kHeader, &rid, 8);
    std::memcpy(h + kHeader + 8, &format, 4);
    const uint32_t crc = crcOf(h + kHeader, kPayloadPrefix, b.bytes);
    std::memcpy(h, &len, 4);
    std::memcpy(h + 4, &crc, 4);
    iov.push_back({h, sizeof(Header::bytes)});
    iov.push_back({const_cast<char*>(b.bytes.data()), b.bytes.size()});
    total += sizeof(Header::bytes) + b.bytes.size();
  }
  // pwritev at the known end (not O_APPEND), so a failed append can be cut back exactly.
  size_t done = 0;
  while (done < total) {
    // Skip iovecs already written; trim a partially written one.
    size_t skip = done;
    std::vector<iovec> rest;
    for (size_t k = 0; k < iov.size(); ++k) {
      if (skip >= iov[k].iov_len) {
        skip -= iov[k].iov_len;
        continue;
      }
      rest.push_back({static_cast<char*>(iov[k].iov_base) + skip, iov[k].iov_len - skip});
      skip = 0;
    }
    const int cnt = static_cast<int>(std::min<size_t>(rest.size(), IOV_MAX));
    ssize_t n = ::pwritev(fd_, rest.data(), cnt, static_cast<off_t>(size_ + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
        // Leave the torn bytes: recover() cuts them off (their CRC or length does not check).
      }
      fail("cannot append", path_, err);
    }
    done += static_cast<size_t>(n);
  }
  if (::fdatasync(fd_) != 0) {
    const int err = errno;
    if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
      // As above.
    }
    fail("cannot sync", path_, err);
  }
  size_ += static_cast<int64_t>(total);
  last_id_ = id;
  return id;
}

void IntakeLog::clear() {
  // Not synced: if the old records came back after a power loss, their ids are at or below the
  // store's "intake_upto" and recover() skips them.
  if (::ftruncate(fd_, 0) != 0) fail("cannot truncate", path_, errno);
  size_ = 0;
}

}  // namespace perfhat::handler
