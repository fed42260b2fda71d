// The session's raw event log: one JSON object per line, appended with a single write() and
// fsync'd before the runner goes on, so a crash or an interrupted session loses nothing that was
// shown as recorded. Several writers (the runner, the language-server proxy) may append to one
// log. A torn last line (power loss mid-write) is ignored on load and cut off before appending.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace perfhat::experiment {

struct Event {
  int64_t t_ms = 0;    // wall clock, Unix milliseconds
  std::string type;    // session_started, task_started, first_encounter, … (docs/experiment.md)
  std::string task;    // empty for session events
  std::string source;  // "keyboard", "lsp" or "runner"
  nlohmann::json detail = nlohmann::json::object();
};

int64_t nowMs();

// Loads every complete event; a malformed line other than a torn last one is an InputError
// naming the line (the log is not to be edited by hand).
std::vector<Event> loadEvents(const std::string& path);

// Appends one event (creating the file) and fsyncs it. Throws std::runtime_error on failure.
void appendEvent(const std::string& path, const Event& e);

}  // namespace perfhat::experiment
