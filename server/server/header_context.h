// The key of what a document's workspace header bodies depend on (walk_cache.h says what it
// covers), computed at every edit without asking libclang again when nothing can have changed
// the inclusions.
//
// Asking libclang for a translation unit's inclusions loads every source-location entry of its
// preamble back from disk: ~30 ms of CPU per edit on one of this repository's files (the
// standard library and nlohmann/json behind it), as much as the rest of the AST walk. The list
// of included files is therefore kept from the last scan and trusted while the compile flags and
// the main file's text up to the end of the line of its last #include are the same and no
// #include directive follows it: the inclusions are then decided by the same text and the same
// files. Those files are identified by what stat() says, as libclang's own preamble check does; a
// workspace header is read and hashed again only when its size or modification time moved. A key
// that differs from the one it is compared with is computed again from a fresh scan, so a header
// that now includes another file is followed from then on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/analysis/translation_unit.h"

namespace perfhat::server {

class HeaderContext {
 public:
  // The key of `tu`'s header context under `workspace_root`; nullopt when it cannot be known (no
  // translation unit, a file that cannot be read), which never matches. `last` is the key it is
  // compared with: the remembered inclusions are used only when they give that key.
  std::optional<uint64_t> key(const analysis::TranslationUnit& tu,
                              const std::string& workspace_root, std::optional<uint64_t> last);
  // Whether the last key() asked libclang for the inclusions (a test hook and the bench's split).
  bool scanned() const { return scanned_; }

  // The key from a fresh scan, nothing remembered.
  static std::optional<uint64_t> scanKey(const analysis::TranslationUnit& tu,
                                         const std::string& workspace_root);

  struct Included {
    std::string name;  // as libclang names it
    bool workspace = false;
  };
  struct Inclusions {
    std::vector<std::string> args;
    std::string given_root;       // as key() was given it
    std::string root;             // absolute, with a trailing '/'; empty without a root
    std::vector<Included> files;  // in inclusion order
    std::string prefix;           // the main file up to the end of the line of its last #include
  };
  // A workspace header's content hash, valid while stat() gives the same size and time.
  struct FileState {
    int64_t size = -1;
    int64_t mtime_ns = 0;
    uint64_t content = 0;
  };
  using FileStates = std::unordered_map<std::string, FileState>;

 private:
  std::optional<Inclusions> inclusions_;
  FileStates files_;
  bool scanned_ = false;
};

}  // namespace perfhat::server
