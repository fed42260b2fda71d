#include "experiment/dashboard_server.h"

#include <chrono>

#include "common/stop_signals.h"
#include "experiment/commands.h"
#include "experiment/dashboard_page.h"
#include "experiment/measurements.h"

namespace perfhat::experiment {
namespace {

constexpr const char* kJson = "application/json";

int64_t nowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void error(httplib::Response& res, int status, const std::string& code, const std::string& msg) {
  res.status = status;
  res.set_content(nlohmann::json{{"error", {{"code", code}, {"message", msg}}}}.dump(), kJson);
}

bool intParam(const httplib::Request& req, const char* name, int64_t fallback, int64_t& out) {
  out = fallback;
  if (!req.has_param(name)) return true;
  const std::string v = req.get_param_value(name);
  if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  out = std::stoll(v);
  return out > 0;
}

}  // namespace

DashboardServer::DashboardServer(HandlerReader& reader) : reader_(reader) {
  svr_.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(dashboardPage()), "text/html; charset=utf-8");
  });
  svr_.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"status\":\"ok\"}", kJson);
  });
  svr_.Get("/api/functions", [this](const httplib::Request& req, httplib::Response& res) {
    int64_t minutes;
    if (!intParam(req, "minutes", int64_t{24} * 60, minutes)) {
      return error(res, 400, "invalid_argument", "minutes must be a positive integer");
    }
    try {
      res.set_content(reader_.functions(nowSeconds(), minutes).dump(), kJson);
    } catch (const std::exception& e) {
      error(res, 502, "bad_gateway", e.what());
    }
  });
  svr_.Get("/api/series", [this](const httplib::Request& req, httplib::Response& res) {
    int64_t minutes, buckets;
    const std::string key = req.get_param_value("key");
    if (key.empty() || key.size() > 4096) {
      return error(res, 400, "invalid_argument", "key is required (at most 4096 bytes)");
    }
    if (!intParam(req, "minutes", 60, minutes) || !intParam(req, "buckets", 24, buckets)) {
      return error(res, 400, "invalid_argument", "minutes and buckets must be positive integers");
    }
    try {
      res.set_content(reader_.series(key, nowSeconds(), minutes, static_cast<int>(buckets)).dump(),
                      kJson);
    } catch (const std::exception& e) {
      error(res, 502, "bad_gateway", e.what());
    }
  });
}

int DashboardServer::bind(const std::string& host, int port) {
  if (port == 0) {
    const int p = svr_.bind_to_any_port(host);
    if (p < 0) throw std::runtime_error("cannot bind " + host);
    return p;
  }
  if (!svr_.bind_to_port(host, port)) {
    throw std::runtime_error("cannot bind " + host + ":" + std::to_string(port));
  }
  return port;
}

void DashboardServer::run() { svr_.listen_after_bind(); }
void DashboardServer::stop() { svr_.stop(); }

int runDashboard(const DashboardOptions& o, std::ostream& out) {
  const auto colon = o.listen.rfind(':');
  int port = -1;
  if (colon != std::string::npos) {
    try {
      port = std::stoi(o.listen.substr(colon + 1));
    } catch (const std::exception&) {
    }
  }
  if (port < 0 || port > 65535) {
    throw InputError("--listen " + o.listen + ": expected HOST:PORT (PORT 0 picks a free one)");
  }
  blockStopSignals();  // before the handler client and the server start their threads

  HandlerReader reader(o.handler, o.token);
  DashboardServer server(reader);
  const std::string host = o.listen.substr(0, colon);
  const int bound = server.bind(host, port);
  out << "dashboard on http://" << host << ":" << bound << "/ (data from " << o.handler << ")"
      << std::endl;
  runUntilStopSignal([&] { server.run(); }, [&] { server.stop(); });
  return 0;
}

}  // namespace perfhat::experiment
