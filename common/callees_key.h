// Prefix of a batchGet key asking for every function production ran from a caller: the handler
// answers `callees:ns::dispatch(int)` with the stored keys that have a call site of that caller
// (the analysis resolves calls through function pointers from them, server/analysis/
// indirect_calls.h). Beside `virtual:` (common/function_key.h).
#pragma once

#include <string_view>

namespace perfhat {

inline constexpr std::string_view kCalleesKeyPrefix = "callees:";

}  // namespace perfhat
