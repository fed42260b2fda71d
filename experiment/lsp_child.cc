#include "experiment/lsp_child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "experiment/lsp_frames.h"

namespace perfhat::experiment {

LspChild::LspChild(const std::vector<std::string>& command, const std::string& stderr_path) {
  if (command.empty()) throw std::invalid_argument("no language server command");
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  const std::string err = stderr_path.empty() ? "/dev/null" : stderr_path;
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    ::dup2(in[0], STDIN_FILENO);
    ::dup2(out[1], STDOUT_FILENO);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (e >= 0) ::dup2(e, STDERR_FILENO);
    std::vector<char*> argv;
    argv.reserve(command.size() + 1);
    for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  to_child_ = in[1];
  from_child_ = out[0];
  reader_ = std::thread([this] {
    FrameReader r(from_child_);
    std::string raw, body;
    while (r.next(raw, body)) {
      try {
        auto m = nlohmann::json::parse(body);
        std::lock_guard lock(mu_);
        inbox_.push_back(std::move(m));
      } catch (const nlohmann::json::exception&) {
        continue;
      }
      cv_.notify_all();
    }
    std::lock_guard lock(mu_);
    eof_ = true;
    cv_.notify_all();
  });
}

LspChild::~LspChild() {
  try {
    const int id = request("shutdown", nullptr);
    take([id](const nlohmann::json& m) { return m.value("id", -1) == id; },
         std::chrono::seconds(20));
    notify("exit", nullptr);
  } catch (const std::exception&) {
  }
  ::close(to_child_);
  bool ended = false;
  for (int i = 0; i < 200 && !ended; ++i) {
    ended = ::waitpid(pid_, nullptr, WNOHANG) == pid_;
    if (!ended) ::usleep(50000);
  }
  if (!ended) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  reader_.join();
  ::close(from_child_);
}

double LspChild::cpuSeconds() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  // Fields after the command (in parentheses, which may hold blanks): state is field 3,
  // utime and stime are fields 14 and 15.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

void LspChild::send(const nlohmann::json& m) {
  if (!writeAll(to_child_, frame(m.dump()))) throw std::runtime_error("language server gone");
}

void LspChild::notify(const std::string& method, nlohmann::json params) {
  nlohmann::json m{{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) m["params"] = std::move(params);
  send(m);
}

int LspChild::request(const std::string& method, nlohmann::json params) {
  const int id = next_id_++;
  nlohmann::json m{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) m["params"] = std::move(params);
  send(m);
  return id;
}

std::optional<nlohmann::json> LspChild::take(const std::function<bool(const nlohmann::json&)>& pred,
                                             std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lock(mu_);
  for (;;) {
    for (auto it = inbox_.begin(); it != inbox_.end(); ++it) {
      if (pred(*it)) {
        nlohmann::json m = std::move(*it);
        inbox_.erase(it);
        return m;
      }
    }
    if (eof_) return std::nullopt;
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout) return std::nullopt;
  }
}

}  // namespace perfhat::experiment
