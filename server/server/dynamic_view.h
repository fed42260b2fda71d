// The production call graph for one document (issue #24): reads the dynamic metrics of its
// functions through the feedback provider and finds where their callers and callees are defined
// in the workspace. An older handler, a file source or a handler that is down give an empty view
// (no lens, no diagnostic) rather than an error.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "server/analysis/snapshot.h"
#include "server/features/dynamic.h"
#include "server/feedback/provider.h"

namespace perfhat::server {

struct DynamicRead {
  std::shared_ptr<const features::DynamicView> view;  // never null
  feedback::FetchStatus status = feedback::FetchStatus::Ok;
  std::string error;  // when the handler failed (the view then holds what the cache had)
};

// At most this many functions of one document are read (one GET each on a cache miss).
inline constexpr size_t kMaxDynamicFunctions = 200;

// `open` are the snapshots of the open documents (their functions are definitions the
// workspace has); `root` the workspace folder, against which relative code.file.path values
// reported by the runtime are resolved.
// `busy`: a batchGet to the source is in flight (a slow handler): read the cache only.
// `lookup` answers the callers' and callees' feedback items (for their code.file.path); the
// server passes its bounded background fetch, so the worker never waits long on the handler.
using ItemLookup = std::function<std::vector<FeedbackItem>(const std::vector<std::string>&)>;
DynamicRead readDynamicView(feedback::FeedbackProvider* provider, const analysis::Snapshot& s,
                            const std::vector<analysis::SnapshotPtr>& open, const std::string& root,
                            bool busy, const ItemLookup& lookup);

// Adds the callers/callees section for a hover on a function's name: below the hover the
// analysis gave, or as the whole hover when it gave none. Links are file URIs with "#L<line>".
void appendDynamicHover(std::optional<features::HoverResult>& hover, const analysis::Snapshot& s,
                        analysis::Position p,
                        const std::shared_ptr<const features::DynamicView>& view, bool markdown);

// The call graph around `key` as a file to show: SVG rendered by Graphviz `dot` where it is
// installed (bounded subprocess), the dot text otherwise, written under `dir`.
struct CallGraphFile {
  std::string path;
  std::string format;  // "svg" or "dot"
  std::string error;   // when nothing could be written
  std::string note;    // why the dot text is shown instead of SVG
};
CallGraphFile writeCallGraph(const std::string& key, const std::string& dot,
                             const std::string& dir);

// Where call graphs are written: $XDG_CACHE_HOME/perfhat/callgraphs, else ~/.cache/…, else
// the system's temporary directory.
std::string callGraphDirectory();

}  // namespace perfhat::server
