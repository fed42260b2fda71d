// A temporary directory of perfhat-lsp's own, for what libclang writes there (a precompiled
// preamble of 2-10 MB per open file). libclang deletes those files when a translation unit is
// disposed, so they outlive a server stopped by a signal; here they are removed on a normal exit,
// on SIGTERM, SIGINT and SIGHUP (unless ignored when the server started), and, after a SIGKILL,
// by the next server that starts (a directory whose lock file no process holds).
#pragma once

#include <string>

namespace perfhat::lsp {

class ProcessTempDir {
 public:
  // Creates `perfhat-lsp-<pid>-XXXXXX` under $TMPDIR (or /tmp), first removing this user's
  // directories of that form whose server has ended, and points TMPDIR at it. Call before any
  // thread starts: the environment is changed. On failure path() is empty and TMPDIR is left as it
  // was.
  ProcessTempDir();
  ~ProcessTempDir();  // removes the directory
  ProcessTempDir(const ProcessTempDir&) = delete;
  ProcessTempDir& operator=(const ProcessTempDir&) = delete;

  const std::string& path() const { return path_; }
  // Why path() is empty, for the log.
  const std::string& error() const { return error_; }
  // How many directories of ended servers were removed.
  int sweptStale() const { return swept_; }

  // On SIGTERM, SIGINT or SIGHUP: remove the directory, then end the process by that signal, as
  // the default action would have. The handler only writes to a pipe; a thread of its own does
  // the removal. Child processes get the default handlers back at exec.
  void removeOnTerminationSignals();

 private:
  std::string path_;
  std::string error_;
  int swept_ = 0;
  int lock_fd_ = -1;  // flock held while the process runs (see sweepStale)
};

}  // namespace perfhat::lsp
