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
#include "feedback-handler/store/store_error.h"

namespace perfhat::handler {
namespace {

// Record format 2 (see intake_log.h): a header that checks on its own, then the body.
constexpr char kMagic[4] = {'P', 'H', 'r', '2'};
constexpr size_t kHeader2 = 28;  // magic, u32 body length, i64 id, i32 format, u32 body CRC,
                                 // u32 CRC of the 24 bytes before it
// Format 1 (before 2026-11): u32 payload length, u32 CRC of the payload, payload = i64 id,
// i32 format, body. Still read, so an upgrade replays what an older handler acknowledged.
constexpr size_t kHeader = 8;               // u32 length, u32 CRC
constexpr size_t kPayloadPrefix = 8 + 4;    // i64 id, i32 format
constexpr uint32_t kMaxPayload = 1u << 30;  // far above any accepted request body

[[noreturn]] void fail(const std::string& what, const std::string& path, int err) {
  throw StoreError("intake log " + path + ": " + what + ": " + std::strerror(err));
}

uint32_t crcOf(const char* prefix, size_t prefix_len, std::string_view body) {
  return crc32(body, crc32(std::string_view(prefix, prefix_len)));
}

uint32_t u32At(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Writes the format-2 header of `body` into h[0, kHeader2).
void putHeader(char* h, int64_t id, int32_t format, std::string_view body) {
  const auto len = static_cast<uint32_t>(body.size());
  const uint32_t body_crc = crc32(body);
  std::memcpy(h, kMagic, 4);
  std::memcpy(h + 4, &len, 4);
  std::memcpy(h + 8, &id, 8);
  std::memcpy(h + 16, &format, 4);
  std::memcpy(h + 20, &body_crc, 4);
  const uint32_t header_crc = crc32(std::string_view(h, 24));
  std::memcpy(h + 24, &header_crc, 4);
}

// True when a format-2 header that checks starts at `pos`.
bool headerAt(const std::string& data, size_t pos) {
  return data.size() - pos >= kHeader2 && std::memcmp(data.data() + pos, kMagic, 4) == 0 &&
         crc32(std::string_view(data.data() + pos, 24)) == u32At(data.data() + pos + 24);
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
  size_t valid = 0;                   // bytes up to the end of the last complete record
  int64_t last = 0;                   // highest id seen (or `after`)
  IntakeLog::Damage damage;           // damaged records and bytes skipped before `valid`
  std::vector<std::string> notes;     // what was skipped, for the log
};

// Every record that checks. Each format-2 record stands on its own: a record whose body does not
// check is skipped alone (its header says where the next one starts); bytes where no header
// checks are skipped up to the next header that does (magic + header CRC). Records are appended
// with increasing ids, so one whose id does not increase (a header found inside a damaged
// stretch that is really part of a body) is skipped too. What follows the last complete record
// is a torn tail: an append that never completed, so was never acknowledged (or damage there,
// which cannot be told apart).
Parsed parse(const std::string& data, int64_t after) {
  Parsed out;
  out.last = after;
  int64_t prev_id = INT64_MIN;
  size_t pos = 0;
  auto keep = [&](int64_t id, int32_t format, std::string_view body) {
    if (id <= prev_id) {
      ++out.damage.records;
      out.notes.push_back("record id " + std::to_string(id) + " out of order at offset " +
                          std::to_string(pos));
      return;
    }
    prev_id = id;
    out.last = std::max(out.last, id);
    if (id > after) out.records.push_back(IntakeRecord{id, format, std::string(body)});
  };
  while (pos < data.size()) {
    const size_t left = data.size() - pos;
    if (headerAt(data, pos)) {
      const char* h = data.data() + pos;
      const uint32_t len = u32At(h + 4);
      if (len > left - kHeader2) break;  // torn: the body was never completely written
      int64_t id;
      int32_t format;
      std::memcpy(&id, h + 8, 8);
      std::memcpy(&format, h + 16, 4);
      const std::string_view body(h + kHeader2, len);
      if (crc32(body) == u32At(h + 20)) {
        keep(id, format, body);
      } else {
        out.last = std::max(out.last, id);  // its id is known: never given to a new record
        ++out.damage.records;
        out.damage.bytes += kHeader2 + len;
        out.notes.push_back("record id " + std::to_string(id) + " (" + std::to_string(len) +
                            " bytes at offset " + std::to_string(pos) +
                            "): body checksum mismatch");
      }
      pos += kHeader2 + len;
      out.valid = pos;
      continue;
    }
    if (left >= kHeader) {  // a format-1 record
      const uint32_t len = u32At(data.data() + pos);
      if (len >= kPayloadPrefix && len <= kMaxPayload && len <= left - kHeader) {
        const char* payload = data.data() + pos + kHeader;
        const std::string_view body(payload + kPayloadPrefix, len - kPayloadPrefix);
        if (crcOf(payload, kPayloadPrefix, body) == u32At(data.data() + pos + 4)) {
          int64_t id;
          int32_t format;
          std::memcpy(&id, payload, 8);
          std::memcpy(&format, payload + 8, 4);
          keep(id, format, body);
          pos += kHeader + len;
          out.valid = pos;
          continue;
        }
      }
    }
    // Damage (or the torn tail): on to the next header that checks.
    size_t next = pos + 1;
    const std::string_view all(data);
    while ((next = all.find(std::string_view(kMagic, 4), next)) != std::string_view::npos &&
           !headerAt(data, next)) {
      ++next;
    }
    if (next == std::string_view::npos) break;
    ++out.damage.records;
    out.damage.bytes += next - pos;
    out.notes.push_back(std::to_string(next - pos) + " damaged bytes at offset " +
                        std::to_string(pos));
    pos = next;
  }
  return out;
}

}  // namespace

std::vector<IntakeRecord> IntakeLog::recover(int64_t after) {
  const std::string data = readAll(fd_, path_);
  Parsed p = parse(data, after);
  for (const std::string& note : p.notes) {
    std::fprintf(stderr, "perfhat-handler: intake log %s: skipped damaged data: %s\n",
                 path_.c_str(), note.c_str());
  }
  damage_ = p.damage;
  if (p.valid < data.size()) {
    // Torn tail: an append cut short by the crash, never acknowledged. Appends start after it.
    std::fprintf(stderr,
                 "perfhat-handler: intake log %s: dropped %zu bytes after the last complete "
                 "record (an append cut short by a crash, or damage there)\n",
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
    char bytes[kHeader2];
  };
  std::vector<Header> headers(bodies.size());
  std::vector<iovec> iov;
  iov.reserve(2 * bodies.size());
  int64_t id = last_id_;
  size_t total = 0;
  for (size_t i = 0; i < bodies.size(); ++i) {
    const IntakeBody& b = bodies[i];
    if (b.bytes.size() > kMaxPayload) throw StoreError("intake log: request body too large to log");
    char* h = headers[i].bytes;
    putHeader(h, ++id, static_cast<int32_t>(b.format), b.bytes);
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
