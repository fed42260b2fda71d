#include "samples/agile/serve.h"

#include <iostream>

#include "common/stop_signals.h"

namespace agile {

bool serveUntilStopped(httplib::Server& server, const cli::HostPort& listen, const char* name) {
  const int port = listen.port == 0
                       ? server.bind_to_any_port(listen.host)
                       : (server.bind_to_port(listen.host, listen.port) ? listen.port : -1);
  if (port < 0) {
    std::cerr << name << ": cannot listen on " << listen.host << ":" << listen.port << "\n";
    return false;
  }
  std::cout << name << " listening on http://" << listen.host << ":" << port << std::endl;
  perfhat::runUntilStopSignal([&] { server.listen_after_bind(); }, [&] { server.stop(); });
  return true;
}

}  // namespace agile
