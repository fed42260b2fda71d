// Runs a shell command and captures its standard output, for tests that drive the shipped
// command-line tools as a user would.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace perfhat::testing {

struct CommandResult {
  int exit_code = -1;  // -1: could not start, or ended by a signal
  std::string output;
};

// `command` goes to /bin/sh as is: quote its arguments, and add 2>&1 to capture errors too.
inline CommandResult runCommand(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace perfhat::testing
