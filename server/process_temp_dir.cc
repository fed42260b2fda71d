#include "server/process_temp_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <csignal>
#include <filesystem>
#include <system_error>
#include <thread>

namespace perfhat::lsp {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPrefix = "perfhat-lsp-";
// A directory is made under this name, locked, then renamed to kPrefix's: a sweep never sees a
// server's directory before its lock is held.
constexpr std::string_view kNewPrefix = "perfhat-lsp-new-";

int signal_pipe_write = -1;

void onTerminationSignal(int sig) {
  const int saved = errno;
  const unsigned char byte = static_cast<unsigned char>(sig);
  [[maybe_unused]] ssize_t n = ::write(signal_pipe_write, &byte, 1);
  errno = saved;
}

// The pid in `<prefix><pid>-XXXXXX`, or 0 when the name is not of that form.
pid_t pidOf(const std::string& name, std::string_view prefix) {
  if (name.compare(0, prefix.size(), prefix) != 0) return 0;
  const char* first = name.data() + prefix.size();
  const char* last = name.data() + name.size();
  long pid = 0;
  auto [end, ec] = std::from_chars(first, last, pid);
  if (ec != std::errc() || end == first || end == last || *end != '-' || pid <= 0) return 0;
  return static_cast<pid_t>(pid);
}

constexpr const char* kLockFile = ".lock";

// Whether the server that made `dir` has ended. It holds an exclusive flock on the directory's lock
// file while it runs, and the kernel drops the lock when the process ends however it ends, so a
// lock we can take means the owner is gone. That holds across PID namespaces sharing a /tmp and
// after the pid was reused. A directory without the lock file (its server was killed between
// creating the directory and the file) falls back to whether the pid is still running.
bool processEnded(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

bool ownerEnded(const fs::path& dir, pid_t pid) {
  const int fd = ::open((dir / kLockFile).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return errno == ENOENT && processEnded(pid);
  const bool ended = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return ended;
}

// Directories of servers that ended without removing theirs (SIGKILL, a crash). Only this user's:
// /tmp is shared.
int sweepStale(const fs::path& base) {
  int swept = 0;
  std::error_code ec;
  for (fs::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    // Still being made (no lock yet): only its pid tells.
    const pid_t making = pidOf(name, kNewPrefix);
    const pid_t pid = making != 0 ? making : pidOf(name, kPrefix);
    if (pid == 0) continue;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid()) {
      continue;
    }
    if (making != 0 ? !processEnded(pid) : !ownerEnded(it->path(), pid)) continue;
    std::error_code rm;
    fs::remove_all(it->path(), rm);
    if (!rm) ++swept;
  }
  return swept;
}

}  // namespace

ProcessTempDir::ProcessTempDir() {
  const char* env = std::getenv("TMPDIR");
  const fs::path base = env && *env ? fs::path(env) : fs::path("/tmp");
  swept_ = sweepStale(base);
  const std::string pid = std::to_string(::getpid());
  std::string made = (base / (std::string(kNewPrefix) + pid + "-XXXXXX")).string();
  if (::mkdtemp(made.data()) == nullptr) {
    error_ = "cannot create a temporary directory under " + base.string() + ": " +
             std::error_code(errno, std::generic_category()).message();
    return;
  }
  // Held until the process ends: other servers' sweeps leave the directory alone while it is.
  lock_fd_ =
      ::open((fs::path(made) / kLockFile).c_str(), O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lock_fd_ >= 0) ::flock(lock_fd_, LOCK_EX | LOCK_NB);
  const std::string suffix = made.substr(made.size() - 6);
  const std::string named = (base / (std::string(kPrefix) + pid + "-" + suffix)).string();
  path_ = ::rename(made.c_str(), named.c_str()) == 0 ? named : made;
  ::setenv("TMPDIR", path_.c_str(), 1);
}

ProcessTempDir::~ProcessTempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

void ProcessTempDir::removeOnTerminationSignals() {
  if (path_.empty() || signal_pipe_write >= 0) return;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  signal_pipe_write = fds[1];
  // The thread owns a copy: it may run while main() is already destroying this object.
  std::thread([read_end = fds[0], dir = path_] {
    unsigned char sig = 0;
    while (::read(read_end, &sig, 1) < 0 && errno == EINTR) {
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    // End as the signal's default action would (the parent sees the signal), not by returning.
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    ::_exit(128 + sig);
  }).detach();
  struct sigaction sa {};
  sa.sa_handler = onTerminationSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    // A signal the parent chose to ignore (nohup, a background job) stays ignored.
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace perfhat::lsp
