// A long-running child process for `deploy` (the sample service, its user directory, the
// workload): started without a shell, with extra environment variables, its output appended to
// a log file (or passed through to ours), stopped with SIGTERM and reaped.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace perfhat::experiment {

class BackgroundProcess {
 public:
  // `log_path` empty: the child writes to our stdout/stderr.
  BackgroundProcess(const std::vector<std::string>& argv,
                    const std::vector<std::pair<std::string, std::string>>& env,
                    const std::string& log_path);
  ~BackgroundProcess();  // stop()
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  // Waits until the log holds "listening on [http://]HOST:PORT" (every perfhat and sample
  // server prints it once it accepts connections) and returns HOST:PORT; nullopt when the child
  // exits first or the timeout passes.
  std::optional<std::string> waitListening(std::chrono::milliseconds timeout);
  // Waits for the child to exit; its exit code (128 + signal when killed), nullopt at timeout.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  // SIGTERM, up to `grace` for it to end (servers flush on the way out), then SIGKILL.
  void stop(std::chrono::milliseconds grace = std::chrono::seconds(10));
  const std::string& logPath() const { return log_path_; }

 private:
  bool reap(bool block);
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
  std::string log_path_;
};

}  // namespace perfhat::experiment
