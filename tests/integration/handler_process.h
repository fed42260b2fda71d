// Test helper: runs a real perfhat-handler process on a loopback port chosen by the handler
// (--listen 127.0.0.1:0), reads "listening on HOST:PORT" from its stderr, and kills it when the
// test ends. Each test gets its own temp directory, so tests run in parallel under ctest -j.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

namespace perfhat::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    char tmpl[] = "/tmp/perfhat-handler-XXXXXX";
    const char* d = mkdtemp(tmpl);
    if (!d) throw std::runtime_error("mkdtemp failed");
    path_ = std::string(d) + "-" + tag;
    std::filesystem::rename(d, path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

class HandlerProcess {
 public:
  // Starts the handler with `args` (--listen is added). Throws if it does not report a port.
  // `file_size_limit` > 0 caps the size of files the handler may write (RLIMIT_FSIZE, with
  // SIGXFSZ ignored): a way to make its storage fail at run time, as a full disk would.
  explicit HandlerProcess(std::vector<std::string> args,
                          std::chrono::seconds timeout = std::chrono::seconds(30),
                          long file_size_limit = 0) {
    args.insert(args.begin(), PERFHAT_HANDLER_BIN);
    args.push_back("--listen");
    args.push_back("127.0.0.1:0");
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDERR_FILENO);
      if (file_size_limit > 0) {
        signal(SIGXFSZ, SIG_IGN);  // ignored dispositions survive exec
        rlimit lim{static_cast<rlim_t>(file_size_limit), static_cast<rlim_t>(file_size_limit)};
        setrlimit(RLIMIT_FSIZE, &lim);
      }
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    err_fd_ = fds[0];
    auto deadline = std::chrono::steady_clock::now() + timeout;
    static const std::regex kListening(R"(listening on ([0-9.]+):([0-9]+))");
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{err_fd_, POLLIN, 0};
      if (poll(&p, 1, 200) <= 0) continue;
      char buf[512];
      ssize_t n = read(err_fd_, buf, sizeof buf);
      if (n <= 0) break;  // exited
      stderr_.append(buf, static_cast<size_t>(n));
      std::smatch m;
      if (std::regex_search(stderr_, m, kListening)) {
        port_ = std::stoi(m[2]);
        return;
      }
    }
    kill9();
    throw std::runtime_error("handler did not start; stderr: " + stderr_);
  }
  ~HandlerProcess() {
    kill9();
    if (err_fd_ >= 0) close(err_fd_);
  }
  HandlerProcess(const HandlerProcess&) = delete;
  HandlerProcess& operator=(const HandlerProcess&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  pid_t pid() const { return pid_; }

  void kill9() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  // SIGTERM, then wait; returns the exit status.
  int terminate() {
    int status = -1;
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      waitpid(pid_, &status, 0);
      pid_ = -1;
    }
    return status;
  }

 private:
  pid_t pid_ = -1;
  int err_fd_ = -1;
  int port_ = 0;
  std::string stderr_;
};

// Runs the handler to completion (for startup errors); returns {exit code, stderr}.
inline std::pair<int, std::string> runHandler(std::vector<std::string> args) {
  args.insert(args.begin(), PERFHAT_HANDLER_BIN);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDERR_FILENO);
    dup2(fds[1], STDOUT_FILENO);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace perfhat::testing
