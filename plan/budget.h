// The hybrid trace/sample solver lives with libperfhat (instrumentation/solver), which re-solves
// the same plan online; perfhat-plan and the library link the one implementation.
#pragma once

#include "hybrid_budget.h"
