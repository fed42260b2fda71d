// A function's cost summary on disk: the analysis' own simplified AST (FunctionInfo and its
// nodes, server/analysis/snapshot.h) without anything production or inference attached. The
// inference reads a summary exactly as it reads a body it parsed itself, so a callee defined in
// another file is costed by the same rules (calls, loops with their iteration sources, branches).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "server/analysis/snapshot.h"

namespace perfhat::index {

// The structure the inference needs: key, names, ranges, body hash, and per node the kind,
// tree links, callee keys (and, for a call through a pointer, that it is one and the parameters
// its targets take), loop evidence (constant trip, annotation, producer, range variable)
// and branch priors. Estimates and production data are not kept.
std::string encodeSummary(const analysis::FunctionInfo& fn);
// std::nullopt for text that is not a summary this version wrote (the store then re-indexes).
std::optional<analysis::FunctionInfo> decodeSummary(std::string_view text);

// FNV-1a 64 of bytes: content, flags and header stamps (stable across runs and builds).
uint64_t contentHash(std::string_view bytes, uint64_t seed = 14695981039346656037ULL);

}  // namespace perfhat::index
