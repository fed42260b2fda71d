// The service's HTTP API (JSON over cpp-httplib). One handler per route, each a request root
// for the instrumentation, so the feedback shows latency per endpoint and per function below it.
#pragma once

#include <string>

#include "samples/agile/backlog_service.h"
#include "samples/agile/httplib_fwd.h"
#include "samples/agile/iteration_service.h"
#include "samples/agile/planning_service.h"
#include "samples/agile/repository.h"
#include "samples/agile/story_service.h"
#include "samples/agile/task_service.h"

namespace agile {

struct ApiConfig {
  // "Today" for deadline rules: fixed, so the demo's answers do not depend on the calendar.
  std::string today = "2026-06-15";
};

class Api {
 public:
  Api(const Repository& repository, const UserDirectoryClient& directory, ApiConfig config = {});

  // Registers every route; the Api must outlive the server.
  void registerRoutes(httplib::Server& server);

  void getProducts(const httplib::Request& request, httplib::Response& response) const;
  void getBacklog(const httplib::Request& request, httplib::Response& response) const;
  void getBacklogTree(const httplib::Request& request, httplib::Response& response) const;
  void getIteration(const httplib::Request& request, httplib::Response& response) const;
  void getIterationSummary(const httplib::Request& request, httplib::Response& response) const;
  void getPlanningCandidates(const httplib::Request& request, httplib::Response& response) const;
  void getStory(const httplib::Request& request, httplib::Response& response) const;
  void getStoryEffort(const httplib::Request& request, httplib::Response& response) const;
  void moveStory(const httplib::Request& request, httplib::Response& response) const;
  void getTask(const httplib::Request& request, httplib::Response& response) const;
  void logHours(const httplib::Request& request, httplib::Response& response) const;
  void getTimesheet(const httplib::Request& request, httplib::Response& response) const;

 private:
  const Repository& repository_;
  ApiConfig config_;
  BacklogService backlogs_;
  IterationService iterations_;
  PlanningService planning_;
  StoryService stories_;
  TaskService tasks_;
};

}  // namespace agile
