// The dashboard's HTTP server (cpp-httplib): the page, and JSON read from the handler.
//   GET /                  the page (dashboard_page.h)
//   GET /api/functions     ?minutes=N               → HandlerReader::functions
//   GET /api/series        ?key=K&minutes=N&buckets=B → HandlerReader::series
//   GET /healthz
// The handler's token stays on the server side; the browser only talks to this server.
#pragma once

#include <httplib.h>

#include <string>

#include "experiment/dashboard_data.h"

namespace perfhat::experiment {

class DashboardServer {
 public:
  explicit DashboardServer(HandlerReader& reader);
  int bind(const std::string& host, int port);  // port 0 picks one; returns the bound port
  void run();                                   // serves until stop()
  void stop();

 private:
  HandlerReader& reader_;
  httplib::Server svr_;
};

}  // namespace perfhat::experiment
