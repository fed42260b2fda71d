// agile-userdir: the user directory the sample service calls for owner names.
//
//   agile-userdir --listen 127.0.0.1:0 [--latency-us 800]
//
// GET /users/{id} answers after a fixed delay, standing in for the directory's own lookup
// (an LDAP query behind an HTTP façade in real deployments).
#include <httplib.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/cli.h"
#include "common/stop_signals.h"
#include "samples/agile/cli.h"
#include "samples/agile/listen_option.h"
#include "samples/agile/serve.h"
#include "samples/agile/user_directory.h"

int main(int argc, char** argv) {
  CLI::App app(
      "The user directory the sample service calls: GET /users/{id} -> {id, login, name, team}\n"
      "after a fixed delay; ids 1..users exist.",
      "agile-userdir");
  perfhat::cli::configure(app, "0.1.0");
  std::string listen_text = "127.0.0.1:0";
  long latency = 800;
  long users = 40;
  agile::addListenOption(app, listen_text);
  app.add_option("--latency-us", latency, "delay before each answer (us)")
      ->check(perfhat::cli::nonNegativeNumber())
      ->capture_default_str();
  app.add_option("--users", users, "number of users in the directory")
      ->check(perfhat::cli::nonNegativeNumber())
      ->capture_default_str();
  perfhat::cli::parse(app, argc, argv);
  const agile::cli::HostPort listen = agile::listenAddress(app, listen_text);
  perfhat::blockStopSignals();

  httplib::Server server;
  const std::chrono::microseconds delay(latency);
  const long max_user = users;
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
  if (!agile::serveUntilStopped(server, listen, "agile-userdir")) return 1;
  return 0;
}
