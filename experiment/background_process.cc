#include "experiment/background_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <thread>

namespace perfhat::experiment {

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv,
                                     const std::vector<std::pair<std::string, std::string>>& env,
                                     const std::string& log_path)
    : log_path_(log_path) {
  if (argv.empty()) throw std::invalid_argument("no command");
  int log_fd = -1;
  if (!log_path.empty()) {
    log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0) throw std::runtime_error(log_path + ": " + std::strerror(errno));
  }
  pid_ = ::fork();
  if (pid_ < 0) {
    if (log_fd >= 0) ::close(log_fd);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid_ == 0) {
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    if (log_fd >= 0) {
      ::dup2(log_fd, STDOUT_FILENO);
      ::dup2(log_fd, STDERR_FILENO);
    }
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    const std::string msg = "cannot run " + argv[0] + ": " + std::strerror(errno) + "\n";
    (void)!::write(STDERR_FILENO, msg.data(), msg.size());
    ::_exit(127);
  }
  if (log_fd >= 0) ::close(log_fd);
}

BackgroundProcess::~BackgroundProcess() { stop(); }

bool BackgroundProcess::reap(bool block) {
  if (exit_code_) return true;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
  if (r != pid_) return false;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return true;
}

std::optional<std::string> BackgroundProcess::waitListening(std::chrono::milliseconds timeout) {
  static const std::regex kListening(R"(listening on (?:http://)?([0-9.]+:[0-9]+))");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    std::ifstream in(log_path_);
    std::string line;
    std::smatch m;
    while (std::getline(in, line)) {
      if (std::regex_search(line, m, kListening)) return m[1].str();
    }
    if (reap(false) || std::chrono::steady_clock::now() > deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::optional<int> BackgroundProcess::wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!reap(false)) {
    if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return exit_code_;
}

void BackgroundProcess::stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0 || exit_code_) return;
  ::kill(pid_, SIGTERM);
  if (!wait(grace)) {
    ::kill(pid_, SIGKILL);
    reap(true);
  }
}

}  // namespace perfhat::experiment
