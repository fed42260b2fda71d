#include "server/server/header_context.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <string_view>
#include <unordered_set>

#include "common/fnv1a.h"
#include "server/analysis/ast_builder.h"
#include "server/index/indexer.h"
#include "server/index/summary_codec.h"

namespace perfhat::server {
namespace {

using Inclusions = HeaderContext::Inclusions;

struct Visit {
  const analysis::TranslationUnit* tu;
  Inclusions* out;
  std::unordered_set<std::string> seen;  // the names in out->files
  unsigned main_offset = 0;              // end of the main file's last #include directive seen
};

std::string fileName(CXFile f) { return analysis::toString(clang_getFileName(f)); }

void add(Visit& v, const std::string& name) {
  if (!v.seen.insert(name).second) return;
  // The walk's own test of a workspace file (Builder::inWorkspace), relative names included.
  const bool workspace = analysis::isUnderRoot(
      std::filesystem::absolute(name).lexically_normal().string(), v.out->root);
  v.out->files.push_back({name, workspace});
}

void visitInclusion(CXFile included, CXSourceLocation* stack, unsigned depth, CXClientData data) {
  auto* v = static_cast<Visit*>(data);
  if (depth == 0) return;  // the main file itself
  const std::string name = fileName(included);
  // Where the main file includes it (the bottom of the stack is in the main file).
  CXFile at = nullptr;
  unsigned offset = 0;
  clang_getSpellingLocation(stack[depth - 1], &at, nullptr, nullptr, &offset);
  if (at && fileName(at) == v->tu->path()) v->main_offset = std::max(v->main_offset, offset);
  add(*v, name);
}

// A file the main file includes below its preamble: clang_getInclusions leaves those out (it
// shows the preamble's inclusion into the main file instead), the main file's own directives
// have them.
CXVisitorResult visitDirective(void* data, CXCursor directive, CXSourceRange extent) {
  auto* v = static_cast<Visit*>(data);
  CXFile at = nullptr;
  unsigned offset = 0;
  clang_getSpellingLocation(clang_getRangeEnd(extent), &at, nullptr, nullptr, &offset);
  v->main_offset = std::max(v->main_offset, offset);
  if (CXFile included = clang_getIncludedFile(directive)) add(*v, fileName(included));
  return CXVisit_Continue;
}

std::optional<Inclusions> scan(const analysis::TranslationUnit& tu, const std::string& root) {
  if (!tu.raw()) return std::nullopt;
  Inclusions in;
  in.args = tu.args();
  in.given_root = root;
  if (!root.empty()) {
    in.root = std::filesystem::absolute(root).lexically_normal().string();
    if (in.root.back() != '/') in.root.push_back('/');
  }
  Visit v{&tu, &in, {}, 0};
  clang_getInclusions(tu.raw(), visitInclusion, &v);
  if (CXFile main = clang_getFile(tu.raw(), tu.path().c_str()))
    clang_findIncludesInFile(tu.raw(), main, CXCursorAndRangeVisitor{&v, visitDirective});
  const std::string_view text = tu.contents();
  const size_t end = text.find('\n', std::min<size_t>(v.main_offset, text.size()));
  in.prefix = text.substr(0, end == std::string_view::npos ? text.size() : end);
  return in;
}

// Whether `text` holds a preprocessor line that can include a file (#include, #include_next,
// #import). Lines continued with a backslash and comments are not undone: anything that could be
// one counts as one.
bool mayInclude(std::string_view text) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; };
  for (size_t at = 0; at < text.size();) {
    size_t i = at;
    while (i < text.size() && blank(text[i])) ++i;
    if (i < text.size() && text[i] == '#') {
      ++i;
      while (i < text.size() && (blank(text[i]) || text[i] == '\\' || text[i] == '\n')) ++i;
      if (text.substr(i, 2) == "in" || text.substr(i, 2) == "im" || i == text.size()) return true;
    }
    const size_t nl = text.find('\n', i);
    if (nl == std::string_view::npos) break;
    at = nl + 1;
  }
  return false;
}

int64_t mtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

// The key over the inclusions as they stand on disk now: the flags; every file in order, with its
// content for workspace headers (their bodies are walked) and its modification time for the
// others; the main file's text up to its last #include.
std::optional<uint64_t> hashOf(const Inclusions& in, HeaderContext::FileStates& states) {
  Fnv1a h;
  for (const std::string& a : in.args) h.text(a);
  for (const HeaderContext::Included& f : in.files) {
    h.text(f.name);
    struct stat st {};
    if (::stat(f.name.c_str(), &st) != 0) return std::nullopt;
    if (!f.workspace) {
      h.number(static_cast<uint64_t>(mtimeNs(st)));
      continue;
    }
    HeaderContext::FileState& s = states[f.name];
    if (s.size != static_cast<int64_t>(st.st_size) || s.mtime_ns != mtimeNs(st)) {
      const std::optional<std::string> bytes = index::readFile(f.name);
      if (!bytes) return std::nullopt;
      s = {static_cast<int64_t>(st.st_size), mtimeNs(st), index::contentHash(*bytes)};
    }
    h.number(s.content);
  }
  h.text(in.prefix);
  return h.h;
}

}  // namespace

std::optional<uint64_t> HeaderContext::key(const analysis::TranslationUnit& tu,
                                           const std::string& workspace_root,
                                           std::optional<uint64_t> last) {
  scanned_ = false;
  if (!tu.raw()) return std::nullopt;
  const std::string_view text = tu.contents();
  if (inclusions_ && last && inclusions_->given_root == workspace_root &&
      inclusions_->args == tu.args() &&
      text.substr(0, inclusions_->prefix.size()) == inclusions_->prefix &&
      (text.size() == inclusions_->prefix.size() || text[inclusions_->prefix.size()] == '\n') &&
      !mayInclude(text.substr(inclusions_->prefix.size()))) {
    std::optional<uint64_t> k = hashOf(*inclusions_, files_);
    if (k == last) return k;
  }
  scanned_ = true;
  inclusions_ = scan(tu, workspace_root);
  if (!inclusions_) return std::nullopt;
  return hashOf(*inclusions_, files_);
}

std::optional<uint64_t> HeaderContext::scanKey(const analysis::TranslationUnit& tu,
                                               const std::string& workspace_root) {
  std::optional<Inclusions> in = scan(tu, workspace_root);
  FileStates states;
  return in ? hashOf(*in, states) : std::nullopt;
}

}  // namespace perfhat::server
