// The release manifests of `perfhat-plan variants` (docs/plan.md), as the handler needs them to
// tell how much of the fleet a function's data comes from: which variants probe a function and
// which variant each replica runs. Read from the planner's history directory
// (`perfhat-handler --releases DIR`, files `release-<id>.json`), again when a read meets a release
// it does not know (at most once per kRescanSeconds).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "common/thread_annotations.h"

namespace perfhat::handler {

struct ReleaseManifest {
  std::string id;
  std::vector<int64_t> assignment;                              // variant of replica r
  std::map<int64_t, std::unordered_set<std::string>> variants;  // variant id → canonical keys
  std::map<int64_t, uint64_t> replicas_of;  // variant id → replicas running it (from assignment)

  bool probes(int64_t variant, std::string_view key) const;
  // Replicas whose variant probes `key`.
  uint64_t replicasProbing(std::string_view key) const;
};

// Parses one manifest; throws std::invalid_argument naming what is wrong.
ReleaseManifest parseReleaseManifest(std::string_view text);

class ReleaseCatalog {
 public:
  static constexpr int kRescanSeconds = 5;
  static constexpr uint64_t kMaxManifestBytes = uint64_t{256} << 20;  // plan/release_history.h
  static constexpr size_t kMaxReleases = 4096;

  // `dir` may be empty (no releases known) or not exist yet (read when it appears).
  explicit ReleaseCatalog(std::string dir);
  // Adds or replaces one release (tests, and manifests given another way).
  void add(ReleaseManifest m) EXCLUDES(mu_);
  // The release `id`, or nullptr when no manifest of it was found.
  std::shared_ptr<const ReleaseManifest> find(const std::string& id) EXCLUDES(mu_);
  // Manifests that could not be read, with the reason (logged by the caller once).
  std::vector<std::string> problems() EXCLUDES(mu_);

 private:
  void rescan() REQUIRES(mu_);

  const std::string dir_;
  Mutex mu_;
  std::map<std::string, std::shared_ptr<const ReleaseManifest>> releases_ GUARDED_BY(mu_);
  std::map<std::string, std::string> problems_ GUARDED_BY(mu_);  // file → reason
  std::chrono::steady_clock::time_point last_scan_ GUARDED_BY(mu_){};
  bool scanned_ GUARDED_BY(mu_) = false;
};

}  // namespace perfhat::handler
