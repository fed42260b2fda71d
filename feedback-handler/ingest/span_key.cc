#include "feedback-handler/ingest/span_key.h"

#include <unordered_map>

#include "common/function_key.h"

namespace perfhat::handler {

// Normalizing a spelling costs microseconds and a service sends the same few thousand
// spellings over and over: memoize per thread (HTTP workers), bounded by clearing when full.
std::string normalizeKey(const std::string& spelling) {
  thread_local std::unordered_map<std::string, std::string> memo;
  if (auto it = memo.find(spelling); it != memo.end()) return it->second;
  if (memo.size() >= 16384) memo.clear();
  return memo.emplace(spelling, normalizeFunctionKey(spelling)).first->second;
}

std::string sanitizeUtf8(std::string s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 2;
    if (ok && len == 2) ok = c >= 0xc2;  // no overlong 2-byte forms
    if (ok && len == 3) {
      auto c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);  // overlong, surrogates
    }
    if (ok && len == 4) {
      auto c1 = static_cast<unsigned char>(s[i + 1]);
      ok = c <= 0xf4 && !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
    }
    if (!ok) {
      s[i] = '?';
      len = 1;
    }
    i += len;
  }
  return s;
}

SpanIdentity identifySpan(const otlp::Span& span) {
  using otlp::attrNumber;
  using otlp::attrString;
  const auto& a = span.attributes;
  SpanIdentity id;
  std::string mangled = attrString(a, "code.function.mangled");
  if (!mangled.empty() && isMangledName(mangled) && !demangle(mangled).empty()) {
    id.mangled = mangled;
    id.key = normalizeKey(mangled);
  }
  if (id.key.empty()) {
    if (std::string sig = attrString(a, "code.function.signature"); !sig.empty()) {
      id.key = normalizeKey(sig);
    }
  }
  if (id.key.empty()) {
    if (std::string name = attrString(a, "code.function.name"); !name.empty()) {
      id.key = normalizeKey(name);
    }
  }
  if (id.key.empty()) {
    std::string fn = attrString(a, "code.function");
    if (!fn.empty()) {
      std::string ns = attrString(a, "code.namespace");
      // Older conventions put the short name in code.function and the scope in code.namespace.
      id.key = normalizeKey(ns.empty() || fn.find("::") != std::string::npos ? fn : ns + "::" + fn);
    }
  }
  if (id.key.empty() && !span.name.empty()) id.key = normalizeKey(span.name);
  id.file = attrString(a, "code.file.path");
  if (id.file.empty()) id.file = attrString(a, "code.filepath");
  double line = 0;
  if (attrNumber(a, "code.line.number", line) || attrNumber(a, "code.lineno", line)) {
    if (line > 0 && line < 1e9) id.line = static_cast<int>(line);
  }
  id.key = sanitizeUtf8(std::move(id.key));
  id.mangled = sanitizeUtf8(std::move(id.mangled));
  id.file = sanitizeUtf8(std::move(id.file));
  return id;
}

}  // namespace perfhat::handler
