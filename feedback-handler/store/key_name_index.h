// The stored function keys by qualified name and by member signature (common/function_key.h),
// for batchGet requests that name no stored key: a template's definition
// (`ns::Queue<E>::push(const E &)`) gets every instantiation production ran, one overload the
// others (the analysis aggregates them, marked), and `virtual:ns::Env::NowMicros()` every
// implementation of the member. Rebuilt from the functions table when its row count changed;
// at most kKeysPerName keys per name. Not thread-safe: the store calls it under its lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "feedback-handler/store/sql.h"

namespace perfhat::handler {

class KeyNameIndex {
 public:
  static constexpr size_t kKeysPerName = 64;
  enum class By { kQualifiedName, kMemberSignature };
  // The stored keys of `name` (a qualifiedName or a memberSignature), or nullptr.
  const std::vector<std::string>* find(sql::Db& db, const std::string& name, By by);

 private:
  std::unordered_map<std::string, std::vector<std::string>> by_name_, by_member_;
  int64_t rows_ = -1;
};

}  // namespace perfhat::handler
