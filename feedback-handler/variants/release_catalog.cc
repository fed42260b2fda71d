#include "feedback-handler/variants/release_catalog.h"

#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/function_key.h"
#include "common/json_parse.h"
#include "common/release_id.h"

namespace perfhat::handler {

bool ReleaseManifest::probes(int64_t variant, std::string_view key) const {
  auto it = variants.find(variant);
  return it != variants.end() && it->second.count(std::string(key)) > 0;
}

uint64_t ReleaseManifest::replicasProbing(std::string_view key) const {
  uint64_t n = 0;
  for (const auto& [v, replicas] : replicas_of) n += probes(v, key) ? replicas : 0;
  return n;
}

namespace {

int64_t variantId(const nlohmann::json& v, const char* what) {
  if (!v.is_number_unsigned() || v.get<uint64_t>() > 1'000'000) {
    throw std::invalid_argument(std::string(what) + " must be a variant id in [0, 1000000]");
  }
  return static_cast<int64_t>(v.get<uint64_t>());
}

}  // namespace

ReleaseManifest parseReleaseManifest(std::string_view text) {
  const JsonParse parsed = parseJson(text);  // nesting-limited
  if (!parsed.ok()) throw std::invalid_argument("not JSON: " + parsed.error);
  const nlohmann::json& m = parsed.value;
  if (!m.is_object()) throw std::invalid_argument("a manifest is a JSON object");
  ReleaseManifest out;
  auto rel = m.find("release");
  if (rel != m.end() && rel->is_string()) out.id = rel->get<std::string>();
  if (rel != m.end() && rel->is_number_unsigned()) out.id = std::to_string(rel->get<uint64_t>());
  if (!isReleaseId(out.id)) {
    throw std::invalid_argument("\"release\" must be 1-64 characters of [A-Za-z0-9._-]");
  }
  auto vars = m.find("variants");
  if (vars == m.end() || !vars->is_array()) throw std::invalid_argument("no \"variants\" array");
  for (const auto& v : *vars) {
    if (!v.is_object() || !v.contains("id") || !v.contains("units") || !v["units"].is_array()) {
      throw std::invalid_argument("every variant is {\"id\":N,\"units\":[keys]}");
    }
    auto& keys = out.variants[variantId(v["id"], "a variant's \"id\"")];
    for (const auto& u : v["units"]) {
      if (!u.is_string()) throw std::invalid_argument("variant units are function keys");
      keys.insert(normalizeFunctionKey(u.get<std::string>()));
    }
  }
  auto asg = m.find("assignment");
  if (asg != m.end()) {
    if (!asg->is_array()) throw std::invalid_argument("\"assignment\" must be an array");
    for (const auto& a : *asg) out.assignment.push_back(variantId(a, "an assignment"));
  } else {
    for (const auto& [id, keys] : out.variants) out.assignment.push_back(id);  // one replica each
  }
  for (int64_t v : out.assignment) ++out.replicas_of[v];
  return out;
}

ReleaseCatalog::ReleaseCatalog(std::string dir) : dir_(std::move(dir)) {}

void ReleaseCatalog::add(ReleaseManifest m) {
  MutexLock l(mu_);
  std::string id = m.id;
  releases_[id] = std::make_shared<const ReleaseManifest>(std::move(m));
}

std::shared_ptr<const ReleaseManifest> ReleaseCatalog::find(const std::string& id) {
  MutexLock l(mu_);
  if (auto it = releases_.find(id); it != releases_.end()) return it->second;
  const auto now = std::chrono::steady_clock::now();
  if (dir_.empty() || (scanned_ && now - last_scan_ < std::chrono::seconds(kRescanSeconds))) {
    return nullptr;
  }
  last_scan_ = now;
  scanned_ = true;
  rescan();
  auto it = releases_.find(id);
  return it == releases_.end() ? nullptr : it->second;
}

std::vector<std::string> ReleaseCatalog::problems() {
  MutexLock l(mu_);
  std::vector<std::string> out;
  for (const auto& [file, why] : problems_) out.push_back(file + ": " + why);
  return out;
}

void ReleaseCatalog::rescan() {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    const std::string name = p.filename().string();
    if (name.rfind("release-", 0) != 0 || p.extension() != ".json") continue;
    const std::string id = name.substr(8, name.size() - 8 - 5);
    if (releases_.count(id) || releases_.size() >= kMaxReleases) continue;
    std::error_code size_ec;
    const auto size = fs::file_size(p, size_ec);
    if (size_ec || size > kMaxManifestBytes) {
      problems_[p.string()] = size_ec ? "cannot read" : "larger than 256 MiB";
      continue;
    }
    std::ifstream in(p, std::ios::binary);
    std::string text(static_cast<size_t>(size), '\0');
    if (!in.read(text.data(), static_cast<std::streamsize>(size))) {
      problems_[p.string()] = "cannot read";
      continue;
    }
    try {
      ReleaseManifest m = parseReleaseManifest(text);
      if (m.id != id) throw std::invalid_argument("its \"release\" is " + m.id + ", not " + id);
      releases_[id] = std::make_shared<const ReleaseManifest>(std::move(m));
      problems_.erase(p.string());
    } catch (const std::exception& e) {
      problems_[p.string()] = e.what();
    }
  }
}

}  // namespace perfhat::handler
