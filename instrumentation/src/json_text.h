// JSON string literals for the library's hand-written JSON (the OTLP/JSON and aggregate bodies
// of perfhat::otlp, the budget controller's status file): libperfhat links no JSON writer. And
// bytes as lowercase hex (OTLP/JSON's trace and span ids, a program's build id).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace perfhat {

// `s` with `"`, `\` and control characters escaped (\n, \r, \t by name, the rest as \u00XX);
// every other byte is copied as it is (UTF-8 passes through).
std::string json_escape(std::string_view s);
// `s` as a JSON string literal: json_escape(s) between quotes.
std::string json_quoted(std::string_view s);
// `n` bytes at `p` as lowercase hex, two digits each.
std::string hex(const unsigned char* p, size_t n);

}  // namespace perfhat
