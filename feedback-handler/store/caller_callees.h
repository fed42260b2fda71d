// The stored functions production ran from a caller, for batchGet's `callees:<caller key>`
// (common/callees_key.h): the analysis resolves a call through a function pointer or a
// `std::function` from them (server/analysis/indirect_calls.h). Read from the call-site rows
// (kind 'c', `sub` = the caller as the runtime spelt it) of the read window, one statement for
// every such key of a request; at most KeyNameIndex::kKeysPerName callees per caller. A caller
// is matched by qualified name (a template definition stands for its instantiations).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "feedback-handler/store/sql.h"

namespace perfhat::handler {

// `callers` are canonical keys (normalizeFunctionKey); the answer maps each to the stored keys
// of its callees in buckets [first_bucket, last_bucket].
std::unordered_map<std::string, std::vector<std::string>> storedCalleesOf(
    sql::Db& db, const std::vector<std::string>& callers, int64_t first_bucket,
    int64_t last_bucket);

}  // namespace perfhat::handler
