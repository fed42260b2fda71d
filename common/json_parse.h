// Parsing JSON from outside (LSP messages, OTLP/JSON, exports, feedback files, settings) with a
// nesting limit. nlohmann's parser is iterative, but copying and comparing a value recurse once per
// level, so a 400 KB document nested 200,000 deep parses fine and then overflows the stack wherever
// it is copied. Nothing perfhat reads is legitimately nested more than a few dozen levels.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace perfhat {

inline constexpr int kMaxJsonDepth = 256;

// The value, or why there is none: "not valid JSON …" or "nested deeper than N levels" (the
// value is then discarded).
using JsonParse = Result<nlohmann::json>;

// Never throws and never builds a value nested deeper than `max_depth` (objects and arrays count
// one level each; a scalar document has depth 0). Time is linear in the input.
JsonParse parseJson(std::string_view text, int max_depth = kMaxJsonDepth);

}  // namespace perfhat
