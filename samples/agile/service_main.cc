// agile-service: the instrumented sample backend.
//
//   agile-service --listen 127.0.0.1:0 --db /tmp/agile.sqlite [--userdir http://127.0.0.1:P]
//                 [--db-latency-us 300] [--threads 8]
//
// Seeds the database on first start, prints "listening on http://HOST:PORT" once it accepts
// connections, and on SIGINT/SIGTERM stops serving and flushes the instrumentation.
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>

#include "samples/agile/api.h"
#include "samples/agile/cli.h"
#include "samples/agile/database.h"
#include "samples/agile/instrumentation.h"
#include "samples/agile/report_api.h"
#include "samples/agile/seed.h"
#include "samples/agile/user_directory.h"

namespace {

constexpr const char* kUsage =
    "usage: agile-service --listen HOST:PORT --db PATH [--userdir URL] [--db-latency-us N]\n"
    "                     [--threads N] [--tcp-nodelay] [--report-max-age-s N]\n"
    "  The Agilefant-style sample service, instrumented with libperfhat (export settings come\n"
    "  from PERFHAT_ENDPOINT, PERFHAT_TOKEN, PERFHAT_SAMPLER, OTEL_SERVICE_NAME).\n"
    "  --listen HOST:PORT  address to serve on; port 0 picks a free one (printed on stdout)\n"
    "  --db PATH           SQLite file; created and seeded with the demo dataset if empty\n"
    "  --userdir URL       the agile-userdir service (owner names); omitted = ids only\n"
    "  --db-latency-us N   simulated database round trip per statement (default 300)\n"
    "  --threads N         worker threads and database connections (default 8)\n"
    "  --tcp-nodelay       send responses without Nagle's delay (off by default: the\n"
    "                      headers-then-body writes then wait for the client's delayed ACK)\n"
    "  --report-max-age-s N  reports' read model is reloaded when older than N s (default 5;\n"
    "                      benchmarks raise it so reloads do not land in some runs and not "
    "others)\n";

}  // namespace

int main(int argc, char** argv) {
  agile::cli::Args args(argc, argv);
  if (args.flag("--help")) {
    std::cout << kUsage;
    return 0;
  }
  if (args.flag("--version")) {
    std::cout << "agile-service 0.1.0\n";
    return 0;
  }
  const auto listen = agile::cli::parseHostPort(args.value("--listen", "127.0.0.1:0"));
  const std::string db_path = args.value("--db", "");
  const std::string userdir = args.value("--userdir", "");
  const auto latency = agile::cli::parseInt(args.value("--db-latency-us", "300"));
  const auto threads = agile::cli::parseInt(args.value("--threads", "8"));
  const bool tcp_nodelay = args.flag("--tcp-nodelay");
  const auto report_max_age = agile::cli::parseInt(args.value("--report-max-age-s", "5"));
  if (!listen || db_path.empty() || !latency || *latency < 0 || !threads || *threads < 1 ||
      !report_max_age || *report_max_age < 0 || !args.unknown().empty()) {
    for (const auto& a : args.unknown())
      std::cerr << "agile-service: unknown argument " << a << "\n";
    std::cerr << kUsage;
    return 2;
  }

  // Stop on SIGINT/SIGTERM from a dedicated thread: blocked everywhere else, so no handler
  // runs inside the server's code.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  try {
    agile::Database db({db_path, std::chrono::microseconds(*latency), int(*threads)});
    agile::createSchema(db);
    const agile::SeedSummary seeded = agile::seedDataset(db);
    if (seeded.products > 0) {
      std::cerr << "agile-service: seeded " << seeded.products << " products, " << seeded.backlogs
                << " backlogs, " << seeded.iterations << " iterations, " << seeded.stories
                << " stories, " << seeded.tasks << " tasks, " << seeded.hour_entries
                << " hour entries\n";
    }
    agile::Repository repository(db);
    agile::UserDirectoryClient directory({userdir});
    agile::Api api(repository, directory);

    httplib::Server server;
    server.new_task_queue = [n = *threads] { return new httplib::ThreadPool(n); };
    server.set_tcp_nodelay(tcp_nodelay);
    api.registerRoutes(server);
    agile::ReportService reports(db, std::chrono::seconds(*report_max_age));
    agile::ReportApi report_api(reports);
    report_api.registerRoutes(server);
    const int port = listen->port == 0
                         ? server.bind_to_any_port(listen->host)
                         : (server.bind_to_port(listen->host, listen->port) ? listen->port : -1);
    if (port < 0) {
      std::cerr << "agile-service: cannot listen on " << listen->host << ":" << listen->port
                << "\n";
      return 1;
    }
    std::thread stopper([&] {
      int signal_number = 0;
      sigwait(&stop_signals, &signal_number);
      server.stop();
    });
    std::cout << "agile-service listening on http://" << listen->host << ":" << port << std::endl;
    server.listen_after_bind();
    // listen_after_bind also returns when the socket fails: wake the stopper with a signal of
    // our own (still blocked, so if the stopper already returned it just stays pending).
    kill(getpid(), SIGTERM);
    stopper.join();
  } catch (const std::exception& e) {
    std::cerr << "agile-service: " << e.what() << "\n";
    return 1;
  }
#ifndef AGILE_NO_PERFHAT
  perfhat::shutdown();
#endif
  std::cerr << "agile-service: stopped\n";
  return 0;
}
