// agile-userdir: the user directory the sample service calls for owner names.
//
//   agile-userdir --listen 127.0.0.1:0 [--latency-us 800]
//
// GET /users/{id} answers after a fixed delay, standing in for the directory's own lookup
// (an LDAP query behind an HTTP façade in real deployments).
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "samples/agile/cli.h"
#include "samples/agile/user_directory.h"

namespace {

constexpr const char* kUsage =
    "usage: agile-userdir --listen HOST:PORT [--latency-us N] [--users N]\n"
    "  GET /users/{id} -> {id, login, name, team} after N microseconds (default 800);\n"
    "  ids 1..users exist (default 40). Port 0 picks a free port (printed on stdout).\n";

}  // namespace

int main(int argc, char** argv) {
  agile::cli::Args args(argc, argv);
  if (args.flag("--help")) {
    std::cout << kUsage;
    return 0;
  }
  if (args.flag("--version")) {
    std::cout << "agile-userdir 0.1.0\n";
    return 0;
  }
  const auto listen = agile::cli::parseHostPort(args.value("--listen", "127.0.0.1:0"));
  const auto latency = agile::cli::parseInt(args.value("--latency-us", "800"));
  const auto users = agile::cli::parseInt(args.value("--users", "40"));
  if (!listen || !latency || *latency < 0 || !users || *users < 0 || !args.unknown().empty()) {
    std::cerr << kUsage;
    return 2;
  }
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  httplib::Server server;
  const std::chrono::microseconds delay(*latency);
  const long max_user = *users;
  server.Get(R"(/users/(\d+))", [&](const httplib::Request& request, httplib::Response& response) {
    std::this_thread::sleep_for(delay);
    long id = 0;
    try {
      id = std::stol(request.matches[1].str());
    } catch (const std::exception&) {
      id = 0;
    }
    if (id < 1 || id > max_user) {
      response.status = 404;
      response.set_content(R"({"error":{"code":404,"message":"no such user"}})",
                           "application/json");
      return;
    }
    const agile::User user = agile::directoryEntry(int(id));
    response.set_content(
        nlohmann::json{
            {"id", user.id}, {"login", user.login}, {"name", user.name}, {"team", user.team}}
            .dump(),
        "application/json");
  });
  server.Get("/healthz", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("ok\n", "text/plain");
  });
  const int port = listen->port == 0
                       ? server.bind_to_any_port(listen->host)
                       : (server.bind_to_port(listen->host, listen->port) ? listen->port : -1);
  if (port < 0) {
    std::cerr << "agile-userdir: cannot listen on " << listen->host << ":" << listen->port << "\n";
    return 1;
  }
  std::thread stopper([&] {
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    server.stop();
  });
  std::cout << "agile-userdir listening on http://" << listen->host << ":" << port << std::endl;
  server.listen_after_bind();
  kill(getpid(), SIGTERM);  // wakes the stopper if the server ended on its own
  stopper.join();
  return 0;
}
