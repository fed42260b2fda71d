// Calls through function pointers, `std::function` and member-function pointers (issue #18).
// The source does not say which function such a call reaches; production's call-site data of
// the calling function does: the functions that ran from it that it does not call directly, and
// whose parameter list fits the call, are the implementations, and their call sites from it add
// up to the call's cost (Matcher::matchIndirect, in indirect_match.cc). With no such data the call
// stays unknown.
#pragma once

#include <clang-c/Index.h>

#include <string>
#include <string_view>

namespace perfhat::analysis {

struct IndirectCall {
  bool indirect = false;
  // The parameter list a target must have, canonical (`(int, const std::string &)`), or "" when
  // the call's type does not say (then any target fits).
  std::string params;
  // The callee as written (`handler`, `(obj.*method)`), for display.
  std::string name;
};

// Whether `call` (a CallExpr whose referenced cursor is `ref`, possibly null) calls through a
// function pointer, a member-function pointer or a `std::function`.
IndirectCall classifyIndirectCall(CXCursor call, CXCursor ref);

// The parameter list of a function key (`ns::f(int, char) const` → `(int, char)`), or "" when
// the key has none of its own (a lambda's `f(int)::lambda#2`).
std::string parameterListOf(std::string_view key);

}  // namespace perfhat::analysis
