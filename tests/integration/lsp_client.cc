#include "tests/integration/lsp_client.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

#include "server/lsp/transport.h"

namespace perfhat::testing {

LspProcess::LspProcess(const std::string& binary, const std::vector<std::string>& args,
                       const std::string& stderr_path) {
  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    dup2(in_pipe[0], STDIN_FILENO);
    dup2(out_pipe[1], STDOUT_FILENO);
    if (!stderr_path.empty()) {
      int fd = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) dup2(fd, STDERR_FILENO);
    }
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(binary.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  to_child_ = in_pipe[1];
  from_child_ = out_pipe[0];
  signal(SIGPIPE, SIG_IGN);
  reader_ = std::thread([this] { readLoop(); });
}

LspProcess::~LspProcess() {
  if (pid_ > 0 && exit_status_ == -2) {
    if (to_child_ >= 0) close(to_child_);
    to_child_ = -1;
    // Closing stdin makes the server stop; give it a bounded time, then kill.
    for (int i = 0; i < 200; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        break;
      }
      usleep(25'000);
    }
    if (exit_status_ == -2) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  if (to_child_ >= 0) close(to_child_);
  if (reader_.joinable()) reader_.join();
  if (from_child_ >= 0) close(from_child_);
}

void LspProcess::readLoop() {
  lsp::FdTransport in(from_child_, -1);
  while (auto f = in.read()) {
    if (!f->ok) continue;
    json j = json::parse(f->body, nullptr, false);
    {
      std::lock_guard lock(mu_);
      messages_.push_back(j.is_discarded() ? json{{"unparsable", f->body}} : j);
    }
    cv_.notify_all();
  }
  std::lock_guard lock(mu_);
  eof_ = true;
  cv_.notify_all();
}

void LspProcess::sendRaw(const std::string& bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = write(to_child_, bytes.data() + off, bytes.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

void LspProcess::send(const json& message) { sendRaw(lsp::encodeFrame(message.dump())); }

int LspProcess::request(const std::string& method, json params) {
  int id;
  {
    std::lock_guard lock(mu_);
    id = ++next_id_;
  }
  send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
  return id;
}

void LspProcess::notify(const std::string& method, json params) {
  send({{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
}

std::optional<json> LspProcess::waitFor(const std::function<bool(const json&)>& pred,
                                        std::chrono::milliseconds timeout, size_t* cursor) {
  std::unique_lock lock(mu_);
  size_t start = cursor ? *cursor : 0;
  std::optional<json> found;
  cv_.wait_for(lock, timeout, [&] {
    for (size_t i = start; i < messages_.size(); ++i) {
      if (pred(messages_[i])) {
        found = messages_[i];
        if (cursor) *cursor = i + 1;
        return true;
      }
    }
    start = messages_.size();
    return eof_;
  });
  return found;
}

std::optional<json> LspProcess::response(const json& id, std::chrono::milliseconds timeout) {
  return waitFor(
      [&](const json& m) { return m.contains("id") && m["id"] == id && !m.contains("method"); },
      timeout);
}

std::optional<json> LspProcess::response(int id, std::chrono::milliseconds timeout) {
  return response(json(id), timeout);
}

std::optional<json> LspProcess::call(const std::string& method, json params,
                                     std::chrono::milliseconds timeout) {
  return response(request(method, std::move(params)), timeout);
}

size_t LspProcess::messageCount() const {
  std::lock_guard lock(mu_);
  return messages_.size();
}

std::vector<json> LspProcess::messages() const {
  std::lock_guard lock(mu_);
  return messages_;
}

bool LspProcess::running() const {
  if (exit_status_ != -2) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return false;
  }
  return r == 0;
}

int LspProcess::shutdownAndWait(std::chrono::milliseconds timeout) {
  if (exit_status_ != -2) return exit_status_;
  call("shutdown", nullptr, timeout);
  notify("exit", nullptr);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      return exit_status_;
    }
    usleep(10'000);
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  exit_status_ = -1;
  return -1;
}

}  // namespace perfhat::testing
