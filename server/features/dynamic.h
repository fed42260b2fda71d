// Production's call graph in the editor (issue #24): per function of a document, what the
// handler's dynamic metrics say (calls per hour, self time, demand rank, callers and callees),
// and the functions production never called. Typed results only; dynamic_text.h words them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/dynamic_metrics.h"
#include "server/features/features.h"

namespace perfhat::features {

// Where a function is defined in the workspace (absolute path, 0-based line).
struct DefinitionLocation {
  std::string file;
  int line = 0;
  bool operator==(const DefinitionLocation&) const = default;
};

// What the server read for one document.
struct DynamicView {
  std::map<std::string, DynamicMetrics> by_key;  // handler key -> metrics (probed functions)
  // Definitions the workspace has, by key: the open documents' functions and the locations
  // the runtime reported (code.file.path) for files that exist.
  std::map<std::string, DefinitionLocation> definitions;
  bool stale = false;  // some metrics came from expired cache entries (the handler failed)
  bool operator==(const DynamicView&) const = default;
};

// The handler keys a function's metrics may be stored under: its own key, then the keys its
// production data matched (a file-line or name match stores under another spelling).
std::vector<std::string> dynamicKeys(const analysis::FunctionInfo& f);
const DynamicMetrics* dynamicFor(const analysis::FunctionInfo& f, const DynamicView& v);

struct DynamicLens {
  Range range;
  std::string key;
  std::optional<double> calls_per_hour;
  std::optional<double> self_p50_ns;
  std::optional<uint64_t> demand_rank;
  uint64_t fan_in = 0, fan_out = 0;
  bool stale = false;
};
// One per function with metrics and at least one call in the window.
std::vector<DynamicLens> dynamicLenses(const Snapshot& s, const DynamicView& v);

struct NeighbourLink {
  std::string key;
  double count = 0;
  std::optional<DefinitionLocation> definition;  // when the workspace has it
};

struct DynamicHover {
  std::string key;
  double visits = 0;
  int64_t window_s = 0;                         // length of the read window
  std::vector<NeighbourLink> callers, callees;  // most calls first, at most `top` each
  uint64_t fan_in = 0, fan_out = 0;             // all of them
};
// For a position on a function's name (its declarator), the callers and callees production saw.
std::optional<DynamicHover> dynamicHover(const Snapshot& s, Position p, const DynamicView& v,
                                         size_t top = 10);

struct NeverCalled {
  Range range;
  std::string key;
  int64_t window_s = 0;
};
// Functions the handler knows (it has their probe's rows: the function is probed) with no call
// in a window the service's data covers (coversWindow).
std::vector<NeverCalled> neverCalled(const Snapshot& s, const DynamicView& v);

}  // namespace perfhat::features
