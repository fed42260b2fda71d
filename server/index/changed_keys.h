// Which function keys an edit changed: the keys added, removed, or whose body hash differs
// between two versions of a file. Used by the index (an open document against what it held) and
// by the server (a document's last snapshot against its new one).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace perfhat::index {

// `key_hash(f)` gives a function's (key, body hash). A key can stand for several functions
// (block-scope classes of one name in one function), so each side of a key is the sorted list of
// its bodies' hashes: an unchanged text leaves every key unchanged. `before` and `after` (and the
// keys they name) must outlive the call.
template <typename Functions, typename KeyHash>
std::vector<std::string> changedKeys(const Functions& before, const Functions& after,
                                     KeyHash key_hash) {
  auto hashes = [&](const Functions& fns) {
    std::unordered_map<std::string_view, std::vector<uint64_t>> out;
    out.reserve(fns.size());
    for (const auto& f : fns) {
      const std::pair<std::string_view, uint64_t> kh = key_hash(f);
      out[kh.first].push_back(kh.second);
    }
    for (auto& [key, h] : out) std::sort(h.begin(), h.end());
    return out;
  };
  const auto had = hashes(before);
  const auto has = hashes(after);
  std::vector<std::string> changed;
  for (const auto& [key, h] : has)
    if (auto o = had.find(key); o == had.end() || o->second != h) changed.emplace_back(key);
  for (const auto& [key, h] : had)
    if (!has.count(key)) changed.emplace_back(key);
  return changed;
}

}  // namespace perfhat::index
