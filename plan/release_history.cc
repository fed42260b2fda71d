#include "plan/release_history.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <unordered_map>

#include "common/json_parse.h"
#include "common/release_id.h"
#include "plan/bounded_file.h"

namespace perfhat::plan {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kPrefix = "release-";
constexpr std::string_view kSuffix = ".json";

fs::path releasePath(const std::string& dir, const std::string& id) {
  return fs::path(dir) / (std::string(kPrefix) + id + std::string(kSuffix));
}

}  // namespace

bool validReleaseId(std::string_view id) {
  return isReleaseId(id) && id.front() != '.';  // a file name, never a hidden one
}

History readHistory(const std::string& dir, const std::vector<std::string>& units) {
  History h;
  h.counts.assign(units.size(), 0);
  std::error_code ec;
  if (!fs::exists(dir, ec)) return h;
  if (!fs::is_directory(dir, ec)) {
    h.error = "history " + dir + " is not a directory";
    return h;
  }
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.size() > kPrefix.size() + kSuffix.size() && name.starts_with(kPrefix) &&
        name.ends_with(kSuffix))
      files.push_back(e.path());
  }
  if (ec) {
    h.error = "cannot list history " + dir + ": " + ec.message();
    return h;
  }
  std::sort(files.begin(), files.end());
  std::unordered_map<std::string_view, std::size_t> index;
  for (std::size_t i = 0; i < units.size(); ++i) index.emplace(units[i], i);
  for (const fs::path& f : files) {
    const Result<std::string> text = readBoundedFile(f.string(), kMaxManifestBytes);
    if (!text) {
      h.error = "history: " + text.error;
      return h;
    }
    JsonParse parsed = parseJson(text.value, 8);
    const nlohmann::json& m = parsed.value;
    auto bad = [&](const std::string& why) {
      h.error = "history file " + f.string() + ": " + why;
      return h;
    };
    if (!parsed.ok()) return bad(parsed.error);
    if (!m.is_object() || !m.contains("variants") || !m["variants"].is_array())
      return bad("not a release manifest (no \"variants\" array)");
    for (const nlohmann::json& v : m["variants"]) {
      if (!v.is_object() || !v.contains("units") || !v["units"].is_array())
        return bad("a variant without a \"units\" array");
      for (const nlohmann::json& u : v["units"]) {
        if (!u.is_string()) return bad("a unit that is not a string");
        if (auto it = index.find(u.get_ref<const std::string&>()); it != index.end())
          ++h.counts[it->second];
      }
    }
    std::string name = f.filename().string();
    h.releases.push_back(
        name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size()));
  }
  return h;
}

std::string nextReleaseId(const History& history) {
  for (std::size_t n = history.releases.size() + 1;; ++n) {
    std::string id = std::to_string(n);
    if (std::find(history.releases.begin(), history.releases.end(), id) == history.releases.end())
      return id;
  }
}

std::string appendRelease(const std::string& dir, const std::string& id,
                          const nlohmann::ordered_json& manifest) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return "cannot create history " + dir + ": " + ec.message();
  fs::path target = releasePath(dir, id);
  if (fs::exists(target, ec)) return "release " + id + " is already in the history " + dir;
  fs::path tmp = fs::path(dir) / ("." + target.filename().string() + ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << manifest.dump() << '\n';
    out.flush();
    if (!out) return "cannot write " + tmp.string();
  }
  // link + unlink, not rename: a release written meanwhile under the same id is never replaced.
  fs::create_hard_link(tmp, target, ec);
  fs::remove(tmp);
  if (ec) return "cannot add release " + id + " to " + dir + ": " + ec.message();
  return "";
}

}  // namespace perfhat::plan
