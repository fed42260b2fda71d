#include "server/server/deployed_source.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "common/subprocess.h"

namespace perfhat::server {
namespace {

// Hex of 7 to 40 digits: what a version must look like to be taken for a commit. Anything else
// ("1.4.2", a build id) is not handed to git.
bool looksLikeCommit(const std::string& v) {
  if (v.size() < 7 || v.size() > 40) return false;
  return std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isxdigit(c) != 0; });
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

const std::string& DeployedSource::toplevel(const std::string& dir) {
  auto it = toplevel_.find(dir);
  if (it != toplevel_.end()) return it->second;
  SubprocessResult r = runSubprocess({"git", "-C", dir, "rev-parse", "--show-toplevel"});
  return toplevel_.emplace(dir, r.ok() ? trimmed(r.out) : std::string()).first->second;
}

std::optional<std::pair<std::string, long long>> DeployedSource::commit(
    const std::string& top, const std::string& version) {
  auto key = std::make_pair(top, version);
  auto it = commits_.find(key);
  if (it != commits_.end()) return it->second;
  std::optional<std::pair<std::string, long long>> found;
  SubprocessResult r = runSubprocess(
      {"git", "-C", top, "log", "-1", "--format=%H %ct", version + "^{commit}", "--"});
  if (r.ok()) {
    std::string line = trimmed(r.out);
    size_t space = line.find(' ');
    if (space != std::string::npos) {
      try {
        found = std::make_pair(line.substr(0, space), std::stoll(line.substr(space + 1)));
      } catch (const std::exception&) {
      }
    }
  }
  commits_.emplace(key, found);
  return found;
}

std::string DeployedSource::revisionFor(const std::string& path,
                                        const std::vector<std::string>& versions,
                                        const std::string& configured) {
  if (configured == "none") return {};
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const std::string& top = toplevel(dir);
  if (top.empty()) return {};
  if (!configured.empty()) {
    auto c = commit(top, configured);
    return c ? c->first : std::string();
  }
  std::optional<std::pair<std::string, long long>> newest;
  for (const std::string& v : versions) {
    if (!looksLikeCommit(v)) continue;
    auto c = commit(top, v);
    if (c && (!newest || c->second > newest->second)) newest = c;
  }
  return newest ? newest->first : std::string();
}

Result<std::string> DeployedSource::textAt(const std::string& path, const std::string& revision) {
  using Text = Result<std::string>;
  const std::filesystem::path file(path);
  const std::string& top = toplevel(file.parent_path().string());
  if (top.empty() || revision.empty()) return Text::failure("not in a git repository");
  std::error_code ec;
  // The path inside the repository, as git names it (symbolic links in the checkout resolved
  // on both sides, as `rev-parse --show-toplevel` resolves them).
  const std::filesystem::path real = std::filesystem::weakly_canonical(file, ec);
  const std::filesystem::path rel = (ec ? file : real).lexically_relative(top);
  if (rel.empty() || rel.native().rfind("..", 0) == 0)
    return Text::failure(path + " is outside " + top);
  SubprocessResult r = runSubprocess({"git", "-C", top, "show", revision + ":" + rel.string()});
  if (!r.ok()) return Text::failure(r.error.empty() ? trimmed(r.err) : r.error);
  return Text::success(std::move(r.out));
}

}  // namespace perfhat::server
