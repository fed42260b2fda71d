// A language server as a child process, spoken to over pipes as an editor does (the overhead
// study's client). Messages from the server are collected by a reader thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace perfhat::experiment {

class LspChild {
 public:
  // Starts `command`; its stderr goes to `stderr_path` (or /dev/null when empty).
  LspChild(const std::vector<std::string>& command, const std::string& stderr_path);
  ~LspChild();  // shutdown + exit, then SIGKILL if it does not end
  LspChild(const LspChild&) = delete;
  LspChild& operator=(const LspChild&) = delete;

  void notify(const std::string& method, nlohmann::json params);
  int request(const std::string& method, nlohmann::json params);
  // Removes and returns the first received message matching `pred`; nullopt at the timeout or
  // when the server has exited.
  std::optional<nlohmann::json> take(const std::function<bool(const nlohmann::json&)>& pred,
                                     std::chrono::milliseconds timeout);
  // CPU seconds (user + system, all threads) the server has used so far, from /proc; a measure
  // that load from other processes on a shared machine does not inflate as it does wall time.
  double cpuSeconds() const;

 private:
  void send(const nlohmann::json& m);
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<nlohmann::json> inbox_;  // GUARDED_BY(mu_)
  bool eof_ = false;                  // GUARDED_BY(mu_)
  int next_id_ = 1;
};

}  // namespace perfhat::experiment
