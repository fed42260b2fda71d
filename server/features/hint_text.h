// The label and tooltip of a node's inline hint, shared by inlayHints() and annotateSource() so
// the editor and `--check` print exactly the same text.
#pragma once

#include <string>

#include "server/features/features.h"

namespace perfhat::features::detail {

struct HintText {
  std::string label;
  std::string tooltip;
  HintKind kind = HintKind::Unknown;
};

HintText hintText(const Snapshot& s, const analysis::FunctionInfo& f, const analysis::Node& n,
                  const Options& o);

// Whether the usage profile shows a hint for `n` (DESIGN §6: design = few, coarse hints).
bool profileShows(const analysis::FunctionInfo& f, const analysis::Node& n, const Options& o);

// "p50 12.4 ms · p99 40 ms · 1.2k calls/min" for production stats (the code lens title body).
std::string statsSummary(const Stats& st, const Options& o);

}  // namespace perfhat::features::detail
