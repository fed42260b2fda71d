// Test/benchmark harness: runs the REAL perfhat-lsp binary as a child process and speaks
// JSON-RPC to it over pipes (Content-Length framing), as an editor does.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace perfhat::testing {

using nlohmann::json;

class LspProcess {
 public:
  // Starts `binary args...`; its stderr goes to `stderr_path` (or is inherited when empty).
  LspProcess(const std::string& binary, const std::vector<std::string>& args,
             const std::string& stderr_path = "");
  ~LspProcess();
  LspProcess(const LspProcess&) = delete;
  LspProcess& operator=(const LspProcess&) = delete;

  void sendRaw(const std::string& bytes);
  void send(const json& message);
  // Sends a request and returns its id.
  int request(const std::string& method, json params);
  void notify(const std::string& method, json params);

  // The first message at index >= *cursor matching `pred`; on success *cursor moves past it.
  std::optional<json> waitFor(const std::function<bool(const json&)>& pred,
                              std::chrono::milliseconds timeout = std::chrono::seconds(60),
                              size_t* cursor = nullptr);
  std::optional<json> response(int id,
                               std::chrono::milliseconds timeout = std::chrono::seconds(60));
  std::optional<json> response(const json& id,
                               std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // request() + response().
  std::optional<json> call(const std::string& method, json params,
                           std::chrono::milliseconds timeout = std::chrono::seconds(60));
  size_t messageCount() const;
  std::vector<json> messages() const;

  // shutdown + exit; returns the exit status (or -1 if it had to be killed).
  int shutdownAndWait(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  bool running() const;
  pid_t pid() const { return pid_; }

 private:
  void readLoop();
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::thread reader_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<json> messages_;
  bool eof_ = false;
  int next_id_ = 1000;
  mutable int exit_status_ = -2;  // -2: still running (or not yet reaped)
};

}  // namespace perfhat::testing
