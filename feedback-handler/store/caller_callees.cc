#include "feedback-handler/store/caller_callees.h"

#include <unordered_set>

#include "common/function_key.h"
#include "feedback-handler/store/key_name_index.h"

namespace perfhat::handler {

std::unordered_map<std::string, std::vector<std::string>> storedCalleesOf(
    sql::Db& db, const std::vector<std::string>& callers, int64_t first_bucket,
    int64_t last_bucket) {
  std::unordered_map<std::string, std::vector<std::string>> out;
  if (callers.empty()) return out;
  // By qualified name: a template definition's key stands for its instantiations, whose callees
  // the analysis keeps by the instantiations its definition matched.
  std::unordered_map<std::string, std::vector<std::string>> by_name;
  for (const std::string& c : callers) {
    out.emplace(c, std::vector<std::string>{});
    by_name[qualifiedName(c)].push_back(c);
  }
  // The runtime's spelling of a caller may differ from the canonical key (`Slice const &`):
  // each distinct one is normalized once.
  std::unordered_map<std::string, std::string> canonical;
  std::unordered_map<std::string, std::unordered_set<std::string>> seen;
  sql::Stmt q(db,
              "SELECT DISTINCT sub, key FROM aggregates WHERE kind = 'c' AND bucket >= ?1 AND "
              "bucket <= ?2");
  q.bind(1, first_bucket).bind(2, last_bucket);
  while (q.step()) {
    std::string sub = q.text(0);
    auto it = canonical.find(sub);
    if (it == canonical.end())
      it = canonical.emplace(sub, qualifiedName(normalizeFunctionKey(sub))).first;
    auto named = by_name.find(it->second);
    if (named == by_name.end()) continue;
    const std::string key = q.text(1);
    for (const std::string& caller : named->second) {
      std::vector<std::string>& keys = out[caller];
      if (keys.size() < KeyNameIndex::kKeysPerName && seen[caller].insert(key).second)
        keys.push_back(key);
    }
  }
  return out;
}

}  // namespace perfhat::handler
