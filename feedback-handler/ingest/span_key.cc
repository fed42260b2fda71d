#include "feedback-handler/ingest/span_key.h"

#include <functional>
#include <string_view>
#include <unordered_map>
#include <variant>

#include "common/function_key.h"

namespace perfhat::handler {

namespace {

struct ViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>()(s); }
};
using Memo = std::unordered_map<std::string, std::string, ViewHash, std::equal_to<>>;

// Normalizing a spelling (and checking a mangled name demangles) costs microseconds and a service
// sends the same few thousand spellings over and over: memoize per thread (HTTP workers), looked
// up by view so a hit allocates nothing but the result, bounded by clearing when full.
template <typename Compute>
std::string memoized(Memo& memo, std::string_view spelling, Compute compute) {
  if (auto it = memo.find(spelling); it != memo.end()) return it->second;
  if (memo.size() >= 16384) memo.clear();
  return memo.emplace(std::string(spelling), compute(std::string(spelling))).first->second;
}

// Canonical, UTF-8-clean key of a spelling.
std::string keyOf(std::string_view spelling) {
  thread_local Memo memo;
  return memoized(memo, spelling,
                  [](const std::string& s) { return sanitizeUtf8(normalizeFunctionKey(s)); });
}

// Key of a code.function.mangled value, "" when it is not a valid mangled name.
std::string keyOfMangled(std::string_view mangled) {
  thread_local Memo memo;
  return memoized(memo, mangled, [](const std::string& m) {
    return isMangledName(m) && !demangle(m).empty() ? sanitizeUtf8(normalizeFunctionKey(m))
                                                    : std::string();
  });
}

// A string attribute without copying; other types as attrString formats them (in `scratch`).
std::string_view textOf(const otlp::Attributes& a, std::string_view key, std::string& scratch) {
  const otlp::AttrValue* v = otlp::findAttr(a, key);
  if (!v) return {};
  if (const auto* s = std::get_if<std::string>(v)) return *s;
  scratch = otlp::attrString(a, key);
  return scratch;
}

bool isAscii(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

std::string clean(std::string_view s) {
  return isAscii(s) ? std::string(s) : sanitizeUtf8(std::string(s));
}

}  // namespace

std::string normalizeKey(const std::string& spelling) { return keyOf(spelling); }

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
  const auto& a = span.attributes;
  SpanIdentity id;
  std::string scratch;
  if (std::string_view m = textOf(a, "code.function.mangled", scratch); !m.empty()) {
    id.key = keyOfMangled(m);
    if (!id.key.empty()) id.mangled = clean(m);
  }
  if (id.key.empty()) {
    if (std::string_view sig = textOf(a, "code.function.signature", scratch); !sig.empty()) {
      id.key = keyOf(sig);
    }
  }
  if (id.key.empty()) {
    if (std::string_view name = textOf(a, "code.function.name", scratch); !name.empty()) {
      id.key = keyOf(name);
    }
  }
  if (id.key.empty()) {
    std::string fn = otlp::attrString(a, "code.function");
    if (!fn.empty()) {
      std::string ns = otlp::attrString(a, "code.namespace");
      // Older conventions put the short name in code.function and the scope in code.namespace.
      id.key = keyOf(ns.empty() || fn.find("::") != std::string::npos ? fn : ns + "::" + fn);
    }
  }
  if (id.key.empty() && !span.name.empty()) id.key = keyOf(span.name);
  std::string_view file = textOf(a, "code.file.path", scratch);
  if (file.empty()) file = textOf(a, "code.filepath", scratch);
  id.file = clean(file);
  double line = 0;
  if (otlp::attrNumber(a, "code.line.number", line) || otlp::attrNumber(a, "code.lineno", line)) {
    if (line > 0 && line < 1e9) id.line = static_cast<int>(line);
  }
  return id;
}

}  // namespace perfhat::handler
