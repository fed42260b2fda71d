// How the sample's binaries serve: until SIGINT/SIGTERM, which a waiting thread takes (no
// handler runs inside the server's code), announcing the bound address on stdout.
#pragma once

#include <httplib.h>
#include <signal.h>

#include "samples/agile/cli.h"

namespace agile {

// Blocks SIGINT and SIGTERM in the calling thread and in every thread it starts afterwards:
// call it first in main. Returns the set for serveUntilStopped.
sigset_t blockStopSignals();

// Binds `server` to `listen` (port 0 picks a free one), prints "NAME listening on
// http://HOST:PORT", and serves until a stop signal arrives or the socket fails. Returns
// false, with a message on stderr, when the address cannot be bound.
bool serveUntilStopped(httplib::Server& server, const cli::HostPort& listen, const char* name,
                       const sigset_t& stop_signals);

}  // namespace agile
