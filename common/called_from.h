// Whether production recorded a function called from a given caller: the `callees:` lookup of
// batchGet (common/function_key.h) answered from items already at hand.
#pragma once

#include <string>

#include "common/callees_key.h"
#include "common/feedback.h"
#include "common/function_key.h"

namespace perfhat {

// `caller` is a canonical key; the runtime's spelling of the item's callers is normalized. A
// caller of the same qualified name counts too (the instantiations of a template's definition,
// or overloads): the analysis keeps those of the callers its definition matched.
inline bool calledFrom(const FeedbackItem& item, const std::string& caller) {
  const std::string name = qualifiedName(caller);
  for (const CallSiteStats& c : item.callsites)
    if (c.caller == caller || qualifiedName(normalizeFunctionKey(c.caller)) == name) return true;
  return false;
}

}  // namespace perfhat
