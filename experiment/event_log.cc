#include "experiment/event_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "experiment/limits.h"
#include "experiment/measurements.h"

namespace perfhat::experiment {
namespace {

std::string toLine(const Event& e) {
  nlohmann::json j{{"t_ms", e.t_ms}, {"type", e.type}};
  if (!e.task.empty()) j["task"] = e.task;
  if (!e.source.empty()) j["source"] = e.source;
  if (!e.detail.empty()) j["detail"] = e.detail;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::vector<Event> loadEvents(const std::string& path) {
  std::vector<Event> events;
  if (!std::filesystem::exists(path)) return events;
  const std::string text = readBoundedFile(path);
  std::istringstream in(text);
  std::string line;
  size_t lineno = 0;
  const bool torn_tail = !text.empty() && text.back() != '\n';
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty()) continue;
    const bool last = in.peek() == EOF;
    if (last && torn_tail) break;  // written partly before a crash: never acknowledged
    try {
      const auto j = nlohmann::json::parse(line);
      Event e;
      e.t_ms = j.at("t_ms").get<int64_t>();
      e.type = j.at("type").get<std::string>();
      e.task = j.value("task", "");
      e.source = j.value("source", "");
      if (j.contains("detail")) e.detail = j["detail"];
      events.push_back(std::move(e));
    } catch (const nlohmann::json::exception& ex) {
      throw InputError(path + ":" + std::to_string(lineno) + ": not an event: " + ex.what());
    }
  }
  return events;
}

void appendEvent(const std::string& path, const Event& e) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(path + ": " + std::strerror(errno));
  // A torn last line from an earlier crash was never acknowledged: cut it off, so this event
  // does not glue onto it.
  const off_t size = ::lseek(fd, 0, SEEK_END);
  char last = '\n';
  if (size > 0 && ::pread(fd, &last, 1, size - 1) == 1 && last != '\n') {
    off_t keep = size - 1;
    char c = 0;
    while (keep > 0 && ::pread(fd, &c, 1, keep - 1) == 1 && c != '\n') --keep;
    if (::ftruncate(fd, keep) != 0) {
      ::close(fd);
      throw std::runtime_error(path + ": cannot cut a torn last line: " + std::strerror(errno));
    }
  }
  const std::string line = toLine(e);
  const ssize_t n = ::write(fd, line.data(), line.size());
  const bool ok = n == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok) throw std::runtime_error(path + ": cannot append event: " + std::strerror(err));
}

}  // namespace perfhat::experiment
