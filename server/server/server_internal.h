// What the Server's translation units share (server.cc, server_requests.cc, server_configure.cc,
// server_documents.cc, server_worker.cc): the clock and the commands the server offers.
#pragma once

#include <chrono>

#include "server/features/dynamic_text.h"
#include "server/server/budget_command.h"
#include "server/server/budget_status_source.h"

namespace perfhat::server {

using Clock = std::chrono::steady_clock;

// workspace/executeCommand: what initialize announces and executeCommand answers.
inline constexpr const char* kCommands[] = {
    "perfhat.refresh",        "perfhat.setIterations",
    "perfhat.showData",       features::kShowCallGraphCommand,
    kCollectionBudgetCommand, "perfhat.showCallers"};

inline double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace perfhat::server
