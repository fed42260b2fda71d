// Rows as this process last committed them (see "Hot rows" in store.h): a merge into a cached
// row skips reading and decoding the stored sketch. Changed only after a successful COMMIT;
// purge and replace invalidate what they touch.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "feedback-handler/store/batch.h"

namespace perfhat::handler::store_detail {

// A row's value, and whether it exists in the table (an update by primary key) or not yet (an
// insert).
struct HotRow {
  AggValue value;
  bool exists = false;
};

using MergedRows = std::vector<std::pair<AggKey, HotRow>>;
using HostKey = std::pair<std::string, std::string>;  // (function key, host)
using HostsWritten = std::vector<std::pair<const HostKey*, int64_t>>;

struct RowCache {
  std::unordered_map<AggKey, HotRow, AggKeyHash> rows;
  int64_t newest_bucket = INT64_MIN;
  // (key, host) → last_seen_ns as stored. A host row only feeds the hosts list and retention, so
  // a newer last_seen within a minute of the stored one is not worth a statement per request.
  std::map<HostKey, int64_t> hosts;

  bool hostIsFresh(const HostKey& kh, int64_t seen) const {
    auto h = hosts.find(kh);
    return h != hosts.end() && seen < h->second + kBucketNs;
  }
  // Bounded: rows of old minutes go first (ingest touches the newest ones), then everything.
  void remember(MergedRows& merged, size_t cap) {
    if (cap == 0) return;
    for (auto& [k, v] : merged) {
      newest_bucket = std::max(newest_bucket, k.bucket);
      rows.insert_or_assign(std::move(k), std::move(v));
    }
    if (rows.size() <= cap) return;
    std::erase_if(rows, [&](const auto& e) { return e.first.bucket < newest_bucket - 1; });
    if (rows.size() > cap) rows.clear();
  }
  void rememberHosts(const HostsWritten& written, size_t cap) {
    if (cap == 0) return;
    if (hosts.size() + written.size() > cap) hosts.clear();
    for (const auto& [kh, seen] : written) {
      int64_t& t = hosts[*kh];
      t = std::max(t, seen);
    }
  }
  void clear() {
    rows.clear();
    hosts.clear();
  }
};

}  // namespace perfhat::handler::store_detail
