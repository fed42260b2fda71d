// Serving until SIGINT or SIGTERM: the signals are blocked in every thread and taken by one
// waiting thread, so no signal handler ever runs inside the server's code.
#pragma once

#include <functional>

namespace perfhat {

// Blocks SIGINT and SIGTERM in the calling thread and in every thread it starts afterwards:
// call it first in main, before any thread is started, so that none of them can take a stop
// signal (and die of it) instead of runUntilStopSignal's waiting thread.
void blockStopSignals();

// Runs serve() on the calling thread while another thread waits for SIGINT or SIGTERM and then
// calls stop(), again every 50 ms until serve() has returned (a stop before serve() is serving
// may be lost). Returns once serve() has returned, on a signal or on its own (a failed socket),
// and the waiting thread has ended. stop() is not called when serve() returned on its own
// unless a stop signal arrived at that same moment, so it must be harmless after serve().
void runUntilStopSignal(const std::function<void()>& serve, const std::function<void()>& stop);

}  // namespace perfhat
