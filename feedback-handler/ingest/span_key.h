// Span → function key (DESIGN §3). The runtime sends what it has; we take the most precise:
//   1. code.function.mangled (ours; Itanium name, demangled and normalized — the exact join key)
//   2. code.function.signature (ours; pretty-function / demangled text with parameters)
//   3. code.function.name (OTel ≥ 1.33: qualified name without parameters)
//   4. code.namespace + code.function (deprecated OTel pair)
//   5. the span name
// Every spelling goes through the shared normalizer (common/function_key.h), so the handler and
// the language server agree on keys.
#pragma once

#include <string>

#include "feedback-handler/otlp/otlp.h"

namespace perfhat::handler {

struct SpanIdentity {
  std::string key;      // canonical key ("" only if the span has no name at all)
  std::string mangled;  // as sent, when it was a valid mangled name
  std::string file;     // code.file.path / code.filepath
  int line = 0;         // code.line.number / code.lineno
};

SpanIdentity identifySpan(const otlp::Span& span);

// Replaces bytes that are not valid UTF-8 with '?': keys and dimensions end up in JSON responses
// (which must be valid UTF-8), and OTLP protobuf strings arrive unchecked.
std::string sanitizeUtf8(std::string s);

// The one place that calls the shared normalizer (kept separate so the ingest path does not
// depend on its exact API).
std::string normalizeKey(const std::string& spelling);

}  // namespace perfhat::handler
