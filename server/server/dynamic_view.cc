#include "server/server/dynamic_view.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <system_error>

#include "common/subprocess.h"
#include "server/features/dynamic_text.h"
#include "server/lsp/protocol.h"

namespace perfhat::server {
namespace {

namespace fs = std::filesystem;

// Rendering a large graph is bounded: a neighbourhood of at most 200 nodes renders in well under
// a second; a runaway dot is killed.
constexpr int kDotTimeoutMs = 10'000;
constexpr size_t kMaxSvgBytes = 16u << 20;

// A reported path the workspace has: absolute and existing, or relative to the root.
std::optional<std::string> workspaceFile(const std::string& file, const std::string& root) {
  if (file.empty()) return std::nullopt;
  std::error_code ec;
  fs::path p(file);
  if (p.is_relative()) {
    if (root.empty()) return std::nullopt;
    p = fs::path(root) / p;
  }
  if (!fs::is_regular_file(p, ec)) return std::nullopt;
  return p.lexically_normal().string();
}

}  // namespace

DynamicRead readDynamicView(feedback::FeedbackProvider* provider, const analysis::Snapshot& s,
                            const std::vector<analysis::SnapshotPtr>& open, const std::string& root,
                            bool busy, const ItemLookup& lookup) {
  DynamicRead out;
  auto view = std::make_shared<features::DynamicView>();
  out.view = view;
  if (!provider) return out;
  std::vector<std::string> keys;
  for (const auto& f : s.functions) {
    for (auto& k : features::dynamicKeys(f)) keys.push_back(std::move(k));
  }
  if (keys.empty()) return out;
  feedback::DynamicLookup l = provider->dynamic(keys, kMaxDynamicFunctions, busy);
  if (l.unsupported) return out;
  out.status = l.status;
  out.error = l.error;
  view->stale = l.stale;
  for (auto& m : l.metrics) view->by_key.emplace(m.key, std::move(m));

  // Definitions of the callers and callees: the open documents' functions first (their
  // positions are current), then where the runtime said the function is, if that file exists.
  std::set<std::string> wanted;
  for (const auto& [k, m] : view->by_key) {
    for (const auto& n : m.callers) wanted.insert(n.key);
    for (const auto& n : m.callees) wanted.insert(n.key);
  }
  for (const auto& snap : open) {
    if (!snap) continue;
    for (const auto& f : snap->functions) {
      if (wanted.count(f.key) && !f.file.empty()) {
        view->definitions.emplace(f.key,
                                  features::DefinitionLocation{f.file, f.name_range.start.line});
      }
    }
  }
  std::vector<std::string> rest;
  for (const auto& k : wanted) {
    if (!view->definitions.count(k)) rest.push_back(k);
  }
  if (rest.empty()) return out;
  // From the cache when it has them; through `lookup` otherwise, unless the handler just failed.
  feedback::Lookup cached = provider->cached(rest);
  std::vector<FeedbackItem> items = std::move(cached.items);
  if (cached.requested_keys > 0 && out.status == feedback::FetchStatus::Ok && !busy && lookup) {
    items = lookup(rest);
  }
  for (const auto& item : items) {
    if (!wanted.count(item.key) || view->definitions.count(item.key)) continue;
    if (auto file = workspaceFile(item.file, root)) {
      view->definitions.emplace(item.key,
                                features::DefinitionLocation{*file, std::max(item.line - 1, 0)});
    }
  }
  return out;
}

void appendDynamicHover(std::optional<features::HoverResult>& hover, const analysis::Snapshot& s,
                        analysis::Position p,
                        const std::shared_ptr<const features::DynamicView>& view, bool markdown) {
  if (!view) return;
  const auto h = features::dynamicHover(s, p, *view);
  if (!h) return;
  const std::string text = features::dynamicHoverText(
      *h,
      [](const features::DefinitionLocation& d) {
        return lsp::pathToUri(d.file) + "#L" + std::to_string(d.line + 1);
      },
      markdown);
  if (hover) {
    hover->markdown += (markdown ? "\n\n---\n\n" : "\n\n") + text;
    return;
  }
  for (const auto& f : s.functions) {
    if (f.name_range.contains(p)) {
      hover = features::HoverResult{f.name_range, text};
      return;
    }
  }
}

std::string callGraphDirectory() {
  fs::path base;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    base = x;
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    base = fs::path(h) / ".cache";
  } else {
    std::error_code ec;
    base = fs::temp_directory_path(ec);
  }
  return (base / "perfhat" / "callgraphs").string();
}

CallGraphFile writeCallGraph(const std::string& key, const std::string& dot,
                             const std::string& dir) {
  CallGraphFile out;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    out.error = "cannot create " + dir + ": " + ec.message();
    return out;
  }
  // One file per function, replaced on every request: a stable name the editor reopens.
  char name[32];
  std::snprintf(name, sizeof name, "callgraph-%016zx", std::hash<std::string>{}(key));
  const fs::path stem = fs::path(dir) / name;

  SubprocessLimits limits;
  limits.timeout_ms = kDotTimeoutMs;
  limits.max_output_bytes = kMaxSvgBytes;
  // dot reads the graph from a file: the subprocess helper gives the child no stdin.
  const std::string dot_path = stem.string() + ".dot";
  {
    std::ofstream f(dot_path, std::ios::binary | std::ios::trunc);
    f << dot;
    if (!f.flush()) {
      out.error = "cannot write " + dot_path;
      return out;
    }
  }
  out.path = dot_path;
  out.format = "dot";
  SubprocessResult r = runSubprocess({"dot", "-Tsvg", dot_path}, {}, limits);
  if (!r.ok()) {
    out.note = !r.error.empty() ? "Graphviz dot is not available (" + r.error + ")"
               : r.timed_out    ? "Graphviz dot did not finish in time"
               : r.truncated    ? "the rendered graph is too large"
                                : "Graphviz dot failed: " + r.err.substr(0, 200);
    return out;
  }
  const std::string svg_path = stem.string() + ".svg";
  std::ofstream f(svg_path, std::ios::binary | std::ios::trunc);
  f << r.out;
  if (!f.flush()) {
    out.note = "cannot write " + svg_path;
    return out;
  }
  out.path = svg_path;
  out.format = "svg";
  return out;
}

}  // namespace perfhat::server
