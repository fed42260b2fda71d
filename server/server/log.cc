#include "server/server/log.h"

#include <chrono>
#include <ctime>

namespace perfhat::server {

Logger::~Logger() {
  if (file_) fclose(file_);
}

bool Logger::openFile(const std::string& path) {
  FILE* f = fopen(path.c_str(), "a");
  if (!f) return false;
  MutexLock lock(mu_);
  if (file_) fclose(file_);
  file_ = f;
  return true;
}

void Logger::log(LogLevel level, std::string_view message) {
  if (level < level_) return;
  static constexpr const char* kTags[] = {"D", "I", "W", "E"};
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  int ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char ts[32];
  std::strftime(ts, sizeof ts, "%H:%M:%S", &tm);
  MutexLock lock(mu_);
  FILE* out = file_ ? file_ : stderr;
  std::fprintf(out, "%s[%s.%03d] %.*s\n", kTags[static_cast<int>(level)], ts, ms,
               static_cast<int>(message.size()), message.data());
  std::fflush(out);
}

}  // namespace perfhat::server
