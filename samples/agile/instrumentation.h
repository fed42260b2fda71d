// The one place the sample service includes its probes from.
//
// The service is built twice: instrumented with libperfhat (the normal build, what the demo and
// the language server see) and, for the monitoring-overhead baseline, with every probe compiled
// out (AGILE_NO_PERFHAT). Keeping the switch here means the service code reads exactly like a
// real user's code: `PERFHAT_FUNCTION()` at the top of every function.
#pragma once

#ifndef AGILE_NO_PERFHAT
#include <perfhat/perfhat.hpp>
#else
#define PERFHAT_FUNCTION() static_cast<void>(0)
#define PERFHAT_SCOPE(name) static_cast<void>(0)
#define PERFHAT_REQUEST(name) static_cast<void>(0)
#define PERFHAT_RESULT_SIZE(n) static_cast<void>(0)
#define PERFHAT_LOOP_ITERATIONS(n) static_cast<void>(0)
#endif
