// Probe distribution across deployed variants (issue 23; Diep, Elbaum, Cohen): a replica runs
// one variant of a release and enables only that variant's probes. The release manifest is the
// one `perfhat-plan variants` writes (docs/plan.md):
//   {"release":"7","variants":[{"id":0,"units":["ns::f(int)",…]},…],"assignment":[0,1,…],…}
// The variant is PERFHAT_VARIANT, or the manifest's assignment of PERFHAT_REPLICA.
// Units are canonical function keys (common/function_key.h), matched against a site's
// normalized function (its mangled symbol when known, else __PRETTY_FUNCTION__) or its name.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>

namespace perfhat {
struct Config;
struct Resource;
}  // namespace perfhat

namespace perfhat::detail {

class VariantMask {
 public:
  // Largest manifest read (the same bound perfhat-plan puts on its history files).
  static constexpr uint64_t kMaxManifestBytes = uint64_t{256} << 20;

  // Reads `path` and picks the variant: `variant` >= 0 names it; otherwise `replica` >= 0 is
  // looked up in the manifest's "assignment". Returns "" on success, else the reason.
  std::string load(const std::string& path, int64_t replica, int64_t variant);
  // Same, from the manifest's text (tests).
  std::string parse(const std::string& text, int64_t replica, int64_t variant);

  // Whether a probe site belongs to this variant. Request roots are never masked (they are the
  // traffic every variant sees and what the handler weighs exposure by).
  bool admits(const char* function, const char* mangled, const std::string& name,
              bool request) const;

  const std::string& release() const { return release_; }
  int64_t variant() const { return variant_; }
  int64_t replica() const { return replica_; }
  size_t size() const { return keys_.size(); }

 private:
  std::string release_;
  int64_t variant_ = -1, replica_ = -1;
  std::unordered_set<std::string> keys_;
};

// The canonical key of a spelling (pretty function, demangled or mangled), as the handler and
// language server compute it: libperfhat's own copy of common/function_key.cc.
std::string canonical_function_key(const std::string& spelling);

struct SiteInfo;  // engine.h

// The engine's hooks (engine.cc calls these and nothing else of this file).
// PERFHAT_VARIANT_MANIFEST, PERFHAT_REPLICA, PERFHAT_VARIANT into `c` (bad numbers are reported on
// stderr and left unset, which init() then refuses with the reason).
void read_variant_env(Config& c);
// The mask `cfg` asks for into `out` (nullptr when it asks for none); "" or the reason it failed.
std::string load_variant_mask(const Config& cfg, std::unique_ptr<VariantMask>& out);
// Whether `site` is probed: always without a mask.
bool in_variant(const VariantMask* mask, const SiteInfo& site);
// Release, variant and replica of `mask` into the resource every record carries.
void set_variant_resource(const VariantMask* mask, Resource& r);

}  // namespace perfhat::detail
