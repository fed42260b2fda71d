// What production ran (DESIGN §10): the revision the feedback names — a `service.version` that
// is a commit of the workspace's git repository — and a file's text at that revision, read with
// `git show`. Answers are cached: a revision's text never changes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace perfhat::server {

class DeployedSource {
 public:
  // The revision to compare `path` against: `configured` when set ("none" turns the comparison
  // off), else the most recent commit among `versions` that the repository holding `path` has.
  // Empty when there is none (not a git checkout, versions that name no commit).
  std::string revisionFor(const std::string& path, const std::vector<std::string>& versions,
                          const std::string& configured);
  // `path`'s text at `revision`; fails (with the reason) when the file is not in that revision
  // or git fails.
  Result<std::string> textAt(const std::string& path, const std::string& revision);

 private:
  // The repository's top directory for a directory ("" when it is not in one).
  const std::string& toplevel(const std::string& dir);
  // Full hash and commit time of `version` in `top`; nullopt when it names no commit.
  std::optional<std::pair<std::string, long long>> commit(const std::string& top,
                                                          const std::string& version);

  std::map<std::string, std::string> toplevel_;  // directory → top ("" = none)
  std::map<std::pair<std::string, std::string>, std::optional<std::pair<std::string, long long>>>
      commits_;
};

}  // namespace perfhat::server
