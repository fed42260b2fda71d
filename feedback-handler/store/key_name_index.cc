#include "feedback-handler/store/key_name_index.h"

#include "common/function_key.h"

namespace perfhat::handler {

const std::vector<std::string>* KeyNameIndex::find(sql::Db& db, const std::string& name, By by) {
  sql::Stmt count(db, "SELECT count(*) FROM functions");
  const int64_t rows = count.step() ? count.i64(0) : 0;
  if (rows != rows_) {
    by_name_.clear();
    by_member_.clear();
    sql::Stmt all(db, "SELECT key FROM functions");
    while (all.step()) {
      std::string key = all.text(0);
      if (std::string m = memberSignature(key); !m.empty()) {
        auto& overrides = by_member_[m];
        if (overrides.size() < kKeysPerName) overrides.push_back(key);
      }
      auto& keys = by_name_[qualifiedName(key)];
      if (keys.size() < kKeysPerName) keys.push_back(std::move(key));
    }
    rows_ = rows;
  }
  const auto& index = by == By::kMemberSignature ? by_member_ : by_name_;
  auto it = index.find(name);
  return it == index.end() ? nullptr : &it->second;
}

}  // namespace perfhat::handler
