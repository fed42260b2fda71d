// HTTP routes of the reports (the sample's CPU-bound path), registered next to the Api's:
//
//   GET /iterations/{id}/burndown   remaining work per day, progress per story, load per owner
//   GET /backlogs/{id}/velocity     planned/done points and hours per iteration of a backlog
//
// Kept apart from Api so the maintenance tasks' patches to api.cc are unaffected.
#pragma once

#include "samples/agile/httplib_fwd.h"
#include "samples/agile/report_service.h"

namespace agile {

class ReportApi {
 public:
  explicit ReportApi(const ReportService& reports) : reports_(reports) {}

  // Registers the report routes; the ReportApi must outlive the server.
  void registerRoutes(httplib::Server& server);

  void getBurndown(const httplib::Request& request, httplib::Response& response) const;
  void getVelocity(const httplib::Request& request, httplib::Response& response) const;

 private:
  const ReportService& reports_;
};

}  // namespace agile
