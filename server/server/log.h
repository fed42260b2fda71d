// Thread-safe logging to stderr or a file (--log). Never stdout: that is the protocol stream.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "common/thread_annotations.h"

namespace perfhat::server {

enum class LogLevel { Debug, Info, Warning, Error };

class Logger {
 public:
  // Logs to stderr.
  Logger() = default;
  ~Logger();
  // Redirects to `path` (appending). Returns false (and keeps stderr) when it cannot be opened.
  bool openFile(const std::string& path);
  void setLevel(LogLevel l) { level_ = l; }
  void log(LogLevel level, std::string_view message);
  void debug(std::string_view m) { log(LogLevel::Debug, m); }
  void info(std::string_view m) { log(LogLevel::Info, m); }
  void warn(std::string_view m) { log(LogLevel::Warning, m); }
  void error(std::string_view m) { log(LogLevel::Error, m); }

 private:
  Mutex mu_;
  FILE* file_ GUARDED_BY(mu_) = nullptr;
  LogLevel level_ = LogLevel::Info;
};

}  // namespace perfhat::server
