#include "samples/agile/report_api.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "samples/agile/instrumentation.h"

namespace agile {

using nlohmann::json;

// JSON forms of the report types; in namespace agile for nlohmann's argument-dependent lookup.
static void to_json(json& j, const BurndownDay& d) {
  j = {{"date", d.date}, {"remaining", d.remaining}, {"ideal", d.ideal}, {"logged", d.logged}};
}
static void to_json(json& j, const StoryProgress& s) {
  j = {{"id", s.id},
       {"points", s.points},
       {"tasks", s.tasks},
       {"done_tasks", s.done_tasks},
       {"estimate", s.estimate},
       {"spent", s.spent}};
}
static void to_json(json& j, const OwnerLoad& o) {
  j = {{"user", o.user},
       {"open_tasks", o.open_tasks},
       {"remaining", o.remaining},
       {"logged", o.logged}};
}
static void to_json(json& j, const IterationVelocity& v) {
  j = {{"iteration", v.iteration},     {"name", v.name},     {"planned_points", v.planned_points},
       {"done_points", v.done_points}, {"logged", v.logged}, {"remaining", v.remaining}};
}

namespace {

void reply(httplib::Response& response, const json& body, int status = 200) {
  response.status = status;
  response.set_content(body.dump(), "application/json");
}

// The numeric id captured by the route's regex (digits only, so this only fails on overflow).
int idParam(const httplib::Request& request) {
  try {
    return request.matches.size() > 1 ? std::stoi(request.matches[1].str()) : 0;
  } catch (const std::exception&) {
    return 0;
  }
}

void notFound(httplib::Response& response, const std::string& message) {
  reply(response, {{"error", {{"code", 404}, {"message", message}}}}, 404);
}

}  // namespace

void ReportApi::registerRoutes(httplib::Server& server) {
  server.Get(R"(/iterations/(\d+)/burndown)",
             [this](const httplib::Request& request, httplib::Response& response) {
               getBurndown(request, response);
             });
  server.Get(R"(/backlogs/(\d+)/velocity)",
             [this](const httplib::Request& request, httplib::Response& response) {
               getVelocity(request, response);
             });
}

void ReportApi::getBurndown(const httplib::Request& request, httplib::Response& response) const {
  PERFHAT_REQUEST("GET /iterations/{id}/burndown");
  const auto report = reports_.burndown(idParam(request));
  if (!report) return notFound(response, "no such iteration");
  reply(response, {{"iteration", report->iteration.id},
                   {"name", report->iteration.name},
                   {"planned_points", report->planned_points},
                   {"done_points", report->done_points},
                   {"days", report->days},
                   {"stories", report->stories},
                   {"owners", report->owners}});
}

void ReportApi::getVelocity(const httplib::Request& request, httplib::Response& response) const {
  PERFHAT_REQUEST("GET /backlogs/{id}/velocity");
  const auto report = reports_.velocity(idParam(request));
  if (!report) return notFound(response, "no such backlog, or it has no iterations");
  reply(response, {{"backlog", report->backlog},
                   {"iterations", report->iterations},
                   {"mean_done_points", report->mean_done_points}});
}

}  // namespace agile
