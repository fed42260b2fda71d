// RFC 3339 timestamps for the read API's windows (DESIGN §12 uses "2026-11-21T00:00:00Z").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace perfhat::handler {

// UTC, second precision: "2026-11-21T00:00:00Z".
std::string formatRfc3339(int64_t unix_ns);
// Accepts "YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)" (also a space or lowercase t/z); nullopt when
// malformed or out of range.
std::optional<int64_t> parseRfc3339(std::string_view text);

}  // namespace perfhat::handler
