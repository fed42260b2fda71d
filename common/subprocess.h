// Runs a program without a shell and collects what it prints, bounded in size and time: for the
// few tools the server asks (git). The child's stdin is /dev/null and its stderr is kept apart.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace perfhat {

struct SubprocessLimits {
  size_t max_output_bytes = 64u << 20;  // stdout beyond this ends the run (truncated = true)
  int timeout_ms = 10'000;              // then the child is killed (timed_out = true)
};

struct SubprocessResult {
  int exit_code = -1;  // -1: did not start or was killed
  std::string out;
  std::string err;  // the first 4 KiB of stderr
  bool truncated = false;
  bool timed_out = false;
  std::string error;  // why it could not run ("" when it ran)
  bool ok() const { return error.empty() && exit_code == 0 && !truncated && !timed_out; }
};

// argv[0] is looked up on PATH. `cwd` empty: the current directory.
SubprocessResult runSubprocess(const std::vector<std::string>& argv, const std::string& cwd = {},
                               const SubprocessLimits& limits = {});

}  // namespace perfhat
