// agile-service: the instrumented sample backend.
//
//   agile-service --listen 127.0.0.1:0 --db /tmp/agile.sqlite [--userdir http://127.0.0.1:P]
//                 [--db-latency-us 300] [--threads 8]
//
// Seeds the database on first start, prints "listening on http://HOST:PORT" once it accepts
// connections, and on SIGINT/SIGTERM stops serving and flushes the instrumentation.
#include <httplib.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "common/cli.h"
#include "common/stop_signals.h"
#include "samples/agile/api.h"
#include "samples/agile/cli.h"
#include "samples/agile/database.h"
#include "samples/agile/instrumentation.h"
#include "samples/agile/listen_option.h"
#include "samples/agile/report_api.h"
#include "samples/agile/seed.h"
#include "samples/agile/serve.h"
#include "samples/agile/user_directory.h"

int main(int argc, char** argv) {
  CLI::App app(
      "The Agilefant-style sample service, instrumented with libperfhat (export settings come\n"
      "from PERFHAT_ENDPOINT, PERFHAT_TOKEN, PERFHAT_SAMPLER, OTEL_SERVICE_NAME).",
      "agile-service");
  perfhat::cli::configure(app, "0.1.0");
  std::string listen_text = "127.0.0.1:0";
  std::string db_path;
  std::string userdir;
  long latency = 300;
  long threads = 8;
  bool tcp_nodelay = false;
  long report_max_age = 5;
  agile::addListenOption(app, listen_text);
  app.add_option("--db", db_path, "SQLite file; created and seeded with the demo dataset if empty")
      ->required();
  app.add_option("--userdir", userdir,
                 "URL of the agile-userdir service (owner names); omitted = ids only");
  app.add_option("--db-latency-us", latency, "simulated database round trip per statement (us)")
      ->check(perfhat::cli::nonNegativeNumber())
      ->capture_default_str();
  app.add_option("--threads", threads, "worker threads and database connections")
      ->check(perfhat::cli::positiveInteger())
      ->capture_default_str();
  app.add_flag("--tcp-nodelay", tcp_nodelay,
               "send responses without Nagle's delay (off by default: the headers-then-body "
               "writes then wait for the client's delayed ACK)");
  app.add_option("--report-max-age-s", report_max_age,
                 "reports' read model is reloaded when older than N s (benchmarks raise it so "
                 "reloads do not land in some runs and not others)")
      ->check(perfhat::cli::nonNegativeNumber())
      ->capture_default_str();
  perfhat::cli::parse(app, argc, argv);
  const agile::cli::HostPort listen = agile::listenAddress(app, listen_text);

  perfhat::blockStopSignals();

  try {
    agile::Database db({db_path, std::chrono::microseconds(latency), int(threads)});
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
    server.new_task_queue = [n = threads] { return new httplib::ThreadPool(n); };
    server.set_tcp_nodelay(tcp_nodelay);
    api.registerRoutes(server);
    agile::ReportService reports(db, std::chrono::seconds(report_max_age));
    agile::ReportApi report_api(reports);
    report_api.registerRoutes(server);
    if (!agile::serveUntilStopped(server, listen, "agile-service")) return 1;
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
