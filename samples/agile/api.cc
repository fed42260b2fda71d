#include "samples/agile/api.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "samples/agile/database.h"
#include "samples/agile/instrumentation.h"

namespace agile {

using nlohmann::json;

// JSON forms of the domain and transfer types. In namespace agile (not an anonymous one) so
// nlohmann's argument-dependent lookup finds them.
static void to_json(json& j, const Backlog& b) {
  j = {{"id", b.id},
       {"product", b.product_id},
       {"parent", b.parent_id},
       {"name", b.name},
       {"archived", b.archived}};
}
static void to_json(json& j, const Iteration& i) {
  j = {{"id", i.id},
       {"backlog", i.backlog_id},
       {"name", i.name},
       {"start", i.start_date},
       {"end", i.end_date}};
}
static void to_json(json& j, const StoryRow& s) {
  j = {{"id", s.id},       {"name", s.name},        {"points", s.story_points},
       {"state", s.state}, {"tasks", s.task_count}, {"open_points", s.open_points}};
}
static void to_json(json& j, const TaskRow& t) {
  j = {{"id", t.id},
       {"name", t.name},
       {"state", t.state},
       {"owner", t.owner},
       {"estimate", t.original_estimate}};
}
static void to_json(json& j, const TimesheetLine& l) {
  j = {{"date", l.date}, {"task", l.task}, {"hours", l.hours}};
}

namespace {

void reply(httplib::Response& response, const json& body, int status = 200) {
  response.status = status;
  response.set_content(body.dump(), "application/json");
}

void error(httplib::Response& response, int status, const std::string& message) {
  reply(response, {{"error", {{"code", status}, {"message", message}}}}, status);
}

// The numeric id captured by the route's regex; the routes only match digits, so this only
// fails on overflow.
std::optional<int> idParam(const httplib::Request& request, size_t index = 1) {
  if (request.matches.size() <= index) return std::nullopt;
  try {
    return std::stoi(request.matches[index].str());
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

Api::Api(const Repository& repository, const UserDirectoryClient& directory, ApiConfig config)
    : repository_(repository),
      config_(std::move(config)),
      backlogs_(repository, directory),
      iterations_(repository),
      planning_(repository, backlogs_),
      stories_(repository, directory),
      tasks_(repository, directory) {}

void Api::registerRoutes(httplib::Server& server) {
  using Handler = void (Api::*)(const httplib::Request&, httplib::Response&) const;
  auto bind = [this](Handler handler) {
    return [this, handler](const httplib::Request& request, httplib::Response& response) {
      (this->*handler)(request, response);
    };
  };
  server.Get("/healthz", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("ok\n", "text/plain");
  });
  server.Get("/products", bind(&Api::getProducts));
  server.Get(R"(/backlogs/(\d+))", bind(&Api::getBacklog));
  server.Get(R"(/backlogs/(\d+)/tree)", bind(&Api::getBacklogTree));
  server.Get(R"(/iterations/(\d+))", bind(&Api::getIteration));
  server.Get(R"(/iterations/(\d+)/summary)", bind(&Api::getIterationSummary));
  server.Get(R"(/iterations/(\d+)/candidates)", bind(&Api::getPlanningCandidates));
  server.Get(R"(/stories/(\d+))", bind(&Api::getStory));
  server.Get(R"(/stories/(\d+)/effort)", bind(&Api::getStoryEffort));
  server.Post(R"(/stories/(\d+)/move)", bind(&Api::moveStory));
  server.Get(R"(/tasks/(\d+))", bind(&Api::getTask));
  server.Post(R"(/tasks/(\d+)/hours)", bind(&Api::logHours));
  server.Get(R"(/users/(\d+)/timesheet)", bind(&Api::getTimesheet));
  server.set_exception_handler(
      [](const httplib::Request&, httplib::Response& response, const std::exception_ptr& failure) {
        try {
          std::rethrow_exception(failure);
        } catch (const DatabaseError& e) {
          error(response, 503, std::string("storage unavailable: ") + e.what());
        } catch (const std::exception& e) {
          error(response, 500, e.what());
        } catch (...) {
          error(response, 500, "unknown error");
        }
      });
}

// Each handler is a request root: PERFHAT_REQUEST is the function's probe too (its span carries
// the function's name and symbol) and makes the per-request sampling decision below it.
void Api::getProducts(const httplib::Request&, httplib::Response& response) const {
  PERFHAT_REQUEST("GET /products");
  json products = json::array();
  for (const Product& product : repository_.products()) {
    products.push_back({{"id", product.id},
                        {"name", product.name},
                        {"backlogs", repository_.backlogsOfProduct(product.id)}});
  }
  reply(response, products);
}

void Api::getBacklog(const httplib::Request& request, httplib::Response& response) const {
  PERFHAT_REQUEST("GET /backlogs/{id}");
  const auto view = backlogs_.backlogContents(idParam(request).value_or(0));
  if (!view) return error(response, 404, "no such backlog");
  reply(response,
        {{"backlog", view->backlog}, {"stories", view->stories}, {"iterations", view->iterations}});
}

void Api::getBacklogTree(const httplib::Request& request, httplib::Response& response) const {
  PERFHAT_REQUEST("GET /backlogs/{id}/tree");
  const auto tree = backlogs_.backlogTree(idParam(request).value_or(0));
  if (!tree) return error(response, 404, "no such backlog");
  reply(response, {{"root", tree->root},
                   {"backlogs", tree->backlog_count},
                   {"stories", tree->story_count},
                   {"points", tree->total_points},
                   {"owners", tree->owners}});
}

void Api::getIteration(const httplib::Request& request, httplib::Response& response) const {
  PERFHAT_REQUEST("GET /iterations/{id}");
  const auto metrics = iterations_.iterationMetrics(idParam(request).value_or(0));
  if (!metrics) return error(response, 404, "no such iteration");
  reply(response, {{"iteration", metrics->iteration},
                   {"stories", metrics->story_count},
                   {"done_stories", metrics->done_stories},
                   {"tasks", metrics->task_count},
                   {"done_tasks", metrics->done_tasks},
                   {"original_estimate", metrics->original_estimate}});
}

void Api::getIterationSummary(const httplib::Request& request, httplib::Response& response) const {
  PERFHAT_REQUEST("GET /iterations/{id}/summary");
  const auto summary = iterations_.iterationSummary(idParam(request).value_or(0), config_.today);
  if (!summary) return error(response, 404, "no such iteration");
  reply(response, {{"iteration", summary->iteration},
                   {"stories", summary->story_names},
                   {"past_deadline", summary->past_deadline}});
}

void Api::getPlanningCandidates(const httplib::Request& request,
                                httplib::Response& response) const {
  PERFHAT_REQUEST("GET /iterations/{id}/candidates");
  const auto ids = planning_.candidateStoryIds(idParam(request).value_or(0));
  if (!ids) return error(response, 404, "no such iteration");
  reply(response, {{"candidates", *ids}});
}

void Api::getStory(const httplib::Request& request, httplib::Response& response) const {
  PERFHAT_REQUEST("GET /stories/{id}");
  const auto story = stories_.storyDetails(idParam(request).value_or(0));
  if (!story) return error(response, 404, "no such story");
  reply(response, {{"id", story->id},
                   {"name", story->name},
                   {"points", story->story_points},
                   {"state", story->state},
                   {"iteration", story->iteration_id},
                   {"tasks", story->tasks}});
}

void Api::getStoryEffort(const httplib::Request& request, httplib::Response& response) const {
  PERFHAT_REQUEST("GET /stories/{id}/effort");
  const auto hours = stories_.storyEffort(idParam(request).value_or(0));
  if (!hours) return error(response, 404, "no such story");
  reply(response, {{"story", idParam(request).value_or(0)}, {"hours", *hours}});
}

void Api::moveStory(const httplib::Request& request, httplib::Response& response) const {
  PERFHAT_REQUEST("POST /stories/{id}/move");
  int iteration = 0;
  try {
    iteration = std::stoi(request.get_param_value("iteration"));
  } catch (const std::exception&) {
    return error(response, 400, "query parameter 'iteration' must be an iteration id");
  }
  switch (stories_.moveStory(idParam(request).value_or(0), iteration, config_.today)) {
    case MoveResult::kMoved:
      return reply(response, {{"moved", true}});
    case MoveResult::kNoSuchStory:
      return error(response, 404, "no such story");
    case MoveResult::kNoSuchIteration:
      return error(response, 404, "no such iteration");
  }
}

void Api::getTask(const httplib::Request& request, httplib::Response& response) const {
  PERFHAT_REQUEST("GET /tasks/{id}");
  const auto task = tasks_.taskDetails(idParam(request).value_or(0));
  if (!task) return error(response, 404, "no such task");
  reply(response, {{"id", task->id},
                   {"story", task->story_id},
                   {"name", task->name},
                   {"state", task->state},
                   {"owner", task->owner},
                   {"estimate", task->original_estimate},
                   {"spent", task->effort_spent}});
}

void Api::logHours(const httplib::Request& request, httplib::Response& response) const {
  PERFHAT_REQUEST("POST /tasks/{id}/hours");
  const json body = json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object() || !body.contains("user") || !body["user"].is_number_integer() ||
      !body.contains("hours") || !body["hours"].is_number() || body["hours"].get<double>() <= 0 ||
      body["hours"].get<double>() > 24) {
    return error(response, 400,
                 "body must be {\"user\": <id>, \"hours\": <0..24>, \"date\": \"YYYY-MM-DD\"}");
  }
  const std::string date = body.value("date", config_.today);
  const auto id = tasks_.logHours(idParam(request).value_or(0), body["user"].get<int>(),
                                  body["hours"].get<double>(), date);
  if (!id) return error(response, 404, "no such task");
  reply(response, {{"id", *id}}, 201);
}

void Api::getTimesheet(const httplib::Request& request, httplib::Response& response) const {
  PERFHAT_REQUEST("GET /users/{id}/timesheet");
  const Timesheet sheet = tasks_.timesheet(idParam(request).value_or(0));
  reply(response, {{"user", sheet.user_id},
                   {"name", sheet.user},
                   {"total_hours", sheet.total_hours},
                   {"lines", sheet.lines}});
}

}  // namespace agile
