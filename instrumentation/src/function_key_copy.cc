// libperfhat links nothing from the rest of the tree (it installs on its own), yet its variant
// masks must name functions exactly as the handler does. So it compiles the one normalizer,
// common/function_key.cc with its parts (type_name.cc, function_key_text.cc), under a namespace of
// its own: a program linking both libperfhat and perfhat_common gets two distinct sets of symbols,
// never a duplicate definition.
#define perfhat perfhat_instrumentation_key
#include "common/function_key.cc"       // NOLINT(bugprone-suspicious-include)
#include "common/function_key_text.cc"  // NOLINT(bugprone-suspicious-include)
#include "common/type_name.cc"          // NOLINT(bugprone-suspicious-include)
#undef perfhat

#include "variant_mask.h"

namespace perfhat::detail {

std::string canonical_function_key(const std::string& spelling) {
  return perfhat_instrumentation_key::normalizeFunctionKey(spelling);
}

}  // namespace perfhat::detail
