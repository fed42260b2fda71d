// How the sample's binaries serve: until SIGINT/SIGTERM (common/stop_signals.h: call
// perfhat::blockStopSignals() first in main), announcing the bound address on stdout.
#pragma once

#include <httplib.h>

#include "samples/agile/cli.h"

namespace agile {

// Binds `server` to `listen` (port 0 picks a free one), prints "NAME listening on
// http://HOST:PORT", and serves until a stop signal arrives or the socket fails. Returns
// false, with a message on stderr, when the address cannot be bound.
bool serveUntilStopped(httplib::Server& server, const cli::HostPort& listen, const char* name);

}  // namespace agile
