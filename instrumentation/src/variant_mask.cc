#include "variant_mask.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine.h"

namespace perfhat::detail {
namespace {

// A release id travels as a resource attribute: the same bound and alphabet perfhat-plan gives it
// (plan/release_history.h).
bool valid_release(const std::string& r) {
  if (r.empty() || r.size() > 64) return false;
  for (char c : r) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string VariantMask::load(const std::string& path, int64_t replica, int64_t variant) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot read " + path;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) return "cannot read " + path;
  if (static_cast<uint64_t>(size) > kMaxManifestBytes) {
    return path + " is larger than 256 MiB";
  }
  in.seekg(0);
  std::string text(static_cast<size_t>(size), '\0');
  if (!in.read(text.data(), size)) return "cannot read " + path;
  std::string err = parse(text, replica, variant);
  return err.empty() ? err : path + ": " + err;
}

std::string VariantMask::parse(const std::string& text, int64_t replica, int64_t variant) {
  using json = nlohmann::json;
  json m = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (m.is_discarded() || !m.is_object()) return "not a JSON object (a perfhat-plan manifest)";
  auto rel = m.find("release");
  if (rel == m.end()) return "no \"release\"";
  std::string release = rel->is_string()            ? rel->get<std::string>()
                        : rel->is_number_unsigned() ? std::to_string(rel->get<uint64_t>())
                                                    : std::string();
  if (!valid_release(release)) return "\"release\" must be 1-64 characters of [A-Za-z0-9._-]";
  auto vars = m.find("variants");
  if (vars == m.end() || !vars->is_array() || vars->empty()) {
    return "\"variants\" must be a non-empty array";
  }
  if (variant < 0) {
    if (replica < 0) return "neither PERFHAT_VARIANT nor PERFHAT_REPLICA is set";
    auto asg = m.find("assignment");
    if (asg == m.end() || !asg->is_array()) return "no \"assignment\" of replicas to variants";
    if (static_cast<uint64_t>(replica) >= asg->size()) {
      return "replica " + std::to_string(replica) + " is not in the assignment (" +
             std::to_string(asg->size()) + " replicas)";
    }
    const json& v = (*asg)[static_cast<size_t>(replica)];
    if (!v.is_number_unsigned()) return "assignment entries must be variant ids";
    variant = static_cast<int64_t>(std::min<uint64_t>(
        v.get<uint64_t>(), static_cast<uint64_t>(std::numeric_limits<int64_t>::max())));
  }
  for (const json& v : *vars) {
    if (!v.is_object()) return "every variant must be an object {\"id\",\"units\"}";
    auto id = v.find("id");
    if (id == v.end() || !id->is_number_unsigned()) return "a variant without a numeric \"id\"";
    if (id->get<uint64_t>() != static_cast<uint64_t>(variant)) continue;
    auto units = v.find("units");
    if (units == v.end() || !units->is_array()) return "variant without a \"units\" array";
    std::unordered_set<std::string> keys;
    for (const json& u : *units) {
      if (!u.is_string()) return "variant units must be function keys (strings)";
      keys.insert(canonical_function_key(u.get<std::string>()));
    }
    release_ = std::move(release);
    variant_ = variant;
    replica_ = replica;
    keys_ = std::move(keys);
    return "";
  }
  return "variant " + std::to_string(variant) + " is not in the manifest";
}

bool VariantMask::admits(const char* function, const char* mangled, const std::string& name,
                         bool request) const {
  if (request) return true;
  if (mangled != nullptr && *mangled != '\0' && keys_.count(canonical_function_key(mangled))) {
    return true;
  }
  if (function != nullptr && *function != '\0' && keys_.count(canonical_function_key(function))) {
    return true;
  }
  return !name.empty() && keys_.count(name) > 0;
}

namespace {

// A replica or variant number: an integer in [0, 1e6] (perfhat-plan's replica bound).
int64_t index_env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return -1;
  char* end = nullptr;
  double d = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(d >= 0 && d <= 1e6) || d != std::floor(d)) {
    std::fprintf(stderr, "perfhat: ignoring %s (an integer in [0, 1000000])\n", name);
    return -1;
  }
  return static_cast<int64_t>(d);
}

}  // namespace

void read_variant_env(Config& c) {
  if (const char* m = std::getenv("PERFHAT_VARIANT_MANIFEST")) c.variant_manifest = m;
  c.replica = index_env("PERFHAT_REPLICA");
  c.variant = index_env("PERFHAT_VARIANT");
}

std::string load_variant_mask(const Config& cfg, std::unique_ptr<VariantMask>& out) {
  out.reset();
  if (cfg.variant_manifest.empty()) {
    if (cfg.variant >= 0 || cfg.replica >= 0) {
      return "PERFHAT_VARIANT/PERFHAT_REPLICA need PERFHAT_VARIANT_MANIFEST (the release manifest)";
    }
    return "";
  }
  auto mask = std::make_unique<VariantMask>();
  std::string err = mask->load(cfg.variant_manifest, cfg.replica, cfg.variant);
  if (!err.empty()) return "PERFHAT_VARIANT_MANIFEST: " + err;
  out = std::move(mask);
  return "";
}

bool in_variant(const VariantMask* mask, const SiteInfo& site) {
  if (mask == nullptr) return true;
  return mask->admits(site.function.c_str(), site.mangled.c_str(), site.name,
                      site.kind == kRequest);
}

void set_variant_resource(const VariantMask* mask, Resource& r) {
  r.release.clear();
  r.variant.clear();
  r.replica.clear();
  if (mask == nullptr) return;
  r.release = mask->release();
  r.variant = std::to_string(mask->variant());
  if (mask->replica() >= 0) r.replica = std::to_string(mask->replica());
}

}  // namespace perfhat::detail
