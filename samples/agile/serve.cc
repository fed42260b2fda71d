#include "samples/agile/serve.h"

#include <unistd.h>

#include <iostream>
#include <thread>

namespace agile {

sigset_t blockStopSignals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return stop_signals;
}

bool serveUntilStopped(httplib::Server& server, const cli::HostPort& listen, const char* name,
                       const sigset_t& stop_signals) {
  const int port = listen.port == 0
                       ? server.bind_to_any_port(listen.host)
                       : (server.bind_to_port(listen.host, listen.port) ? listen.port : -1);
  if (port < 0) {
    std::cerr << name << ": cannot listen on " << listen.host << ":" << listen.port << "\n";
    return false;
  }
  std::thread stopper([&] {
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    server.stop();
  });
  std::cout << name << " listening on http://" << listen.host << ":" << port << std::endl;
  server.listen_after_bind();
  // listen_after_bind also returns when the socket fails: wake the stopper with a signal of
  // our own (still blocked, so if the stopper already returned it just stays pending).
  kill(getpid(), SIGTERM);
  stopper.join();
  return true;
}

}  // namespace agile
