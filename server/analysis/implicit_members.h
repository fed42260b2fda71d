// The special members the compiler defines for a class that does not declare them (default,
// copy and move constructors and assignments, destructor). Production measures them under the
// class's name (`ns::Queue<int>::~Queue()`), and the source has no definition for them but the
// class itself: each becomes a FunctionInfo over the class, marked FunctionInfo::implicit, that
// the analysis keeps only when production data matched it (analyze.cc). Which of them the
// language really declares implicitly does not matter here: one that never exists has no data.
#pragma once

#include <clang-c/Index.h>

#include <string>
#include <vector>

#include "server/analysis/snapshot.h"

namespace perfhat::analysis {

// `cls`: a class definition; `qualified`: its key prefix, e.g. `ns::Queue<E>` (semantic parents
// and display name); `range` / `name_range`: the class's extent and name in `file`.
std::vector<FunctionInfo> implicitSpecialMembers(CXCursor cls, const std::string& qualified,
                                                 const std::string& file, Range range,
                                                 Range name_range);

}  // namespace perfhat::analysis
