#include "samples/workload/workload.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <numbers>
#include <stdexcept>
#include <thread>

namespace agile::workload {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::optional<Shape> parseShape(const std::string& name) {
  if (name == "stationary") return Shape::kStationary;
  if (name == "seasonal") return Shape::kSeasonal;
  if (name == "bursts") return Shape::kBursts;
  return std::nullopt;
}

const char* toString(Shape shape) {
  switch (shape) {
    case Shape::kStationary:
      return "stationary";
    case Shape::kSeasonal:
      return "seasonal";
    case Shape::kBursts:
      return "bursts";
  }
  return "?";
}

double LoadShape::rateAt(double t) const {
  switch (shape) {
    case Shape::kStationary:
      return base_rate;
    case Shape::kSeasonal:
      return std::max(0.1, base_rate * (1 + seasonal_amplitude *
                                                std::sin(2 * std::numbers::pi * t / period_s)));
    case Shape::kBursts:
      if (burst_every_s > 0 && std::fmod(t, burst_every_s) >= burst_every_s - burst_length_s) {
        return base_rate * burst_factor;
      }
      return base_rate;
  }
  return base_rate;
}

Session::Kind pickKind(const PatternMix& mix, std::mt19937& random) {
  const double total = mix.planner + mix.developer + mix.manager + mix.analyst;
  if (total <= 0) return Session::Kind::kDeveloper;
  const double x = std::uniform_real_distribution<double>(0, total)(random);
  if (x < mix.planner) return Session::Kind::kPlanner;
  if (x < mix.planner + mix.developer) return Session::Kind::kDeveloper;
  if (x < mix.planner + mix.developer + mix.manager) return Session::Kind::kManager;
  return Session::Kind::kAnalyst;
}

Session::Session(Kind kind, const Catalog& catalog, std::mt19937& random)
    : kind_(kind), catalog_(catalog), random_(random) {}

int Session::pick(const std::vector<int>& ids) {
  if (ids.empty()) return 1;
  return ids[std::uniform_int_distribution<size_t>(0, ids.size() - 1)(random_)];
}

namespace {

// An id from a JSON array of objects in the previous answer (e.g. the tasks of a story page).
std::optional<int> pickFromAnswer(const std::string& body, const char* field,
                                  std::mt19937& random) {
  const json answer = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!answer.is_object() || !answer.contains(field) || !answer[field].is_array() ||
      answer[field].empty()) {
    return std::nullopt;
  }
  const json& list = answer[field];
  const json& item = list[std::uniform_int_distribution<size_t>(0, list.size() - 1)(random)];
  if (item.is_number_integer()) return item.get<int>();
  if (item.is_object() && item.contains("id") && item["id"].is_number_integer()) {
    return item["id"].get<int>();
  }
  return std::nullopt;
}

Request get(std::string path, std::string route) {
  return Request{"GET", std::move(path), "", std::move(route)};
}

}  // namespace

std::optional<Request> Session::next(const std::string& last_body) {
  const int step = step_++;
  const auto id = [](int v) { return std::to_string(v); };
  switch (kind_) {
    case Kind::kPlanner:
      switch (step) {
        case 0:
          return get("/products", "GET /products");
        case 1:
          backlog_ = pick(catalog_.backlogs);
          return get("/backlogs/" + id(backlog_), "GET /backlogs/{id}");
        case 2: {
          const auto it = catalog_.iterations_of_backlog.find(backlog_);
          iteration_ = it != catalog_.iterations_of_backlog.end() && !it->second.empty()
                           ? pick(it->second)
                           : pick(catalog_.iterations);
          story_ = pickFromAnswer(last_body, "stories", random_).value_or(pick(catalog_.stories));
          return get("/iterations/" + id(iteration_), "GET /iterations/{id}");
        }
        case 3:
          return get("/iterations/" + id(iteration_) + "/candidates",
                     "GET /iterations/{id}/candidates");
        case 4:
          // One planner in four actually moves a story.
          if (std::uniform_int_distribution<int>(0, 3)(random_) != 0) return std::nullopt;
          return Request{"POST", "/stories/" + id(story_) + "/move?iteration=" + id(iteration_), "",
                         "POST /stories/{id}/move"};
        default:
          return std::nullopt;
      }
    case Kind::kDeveloper:
      switch (step) {
        case 0:
          iteration_ = pick(catalog_.iterations);
          return get("/iterations/" + id(iteration_) + "/summary", "GET /iterations/{id}/summary");
        case 1:
          story_ = pick(catalog_.stories);
          return get("/stories/" + id(story_), "GET /stories/{id}");
        case 2:
          task_ = pickFromAnswer(last_body, "tasks", random_).value_or(0);
          if (task_ == 0) return std::nullopt;
          return get("/tasks/" + id(task_), "GET /tasks/{id}");
        case 3: {
          const int user = std::uniform_int_distribution<int>(1, catalog_.users)(random_);
          const double hours = std::uniform_int_distribution<int>(1, 8)(random_) * 0.5;
          return Request{"POST", "/tasks/" + id(task_) + "/hours",
                         json{{"user", user}, {"hours", hours}, {"date", "2026-06-15"}}.dump(),
                         "POST /tasks/{id}/hours"};
        }
        case 4:
          return get("/stories/" + id(story_) + "/effort", "GET /stories/{id}/effort");
        default:
          return std::nullopt;
      }
    case Kind::kManager:
      switch (step) {
        case 0:
          iteration_ = pick(catalog_.iterations);
          return get("/iterations/" + id(iteration_), "GET /iterations/{id}");
        case 1:
          // The whole-tree report is opened by one manager in three.
          if (std::uniform_int_distribution<int>(0, 2)(random_) != 0) {
            step_ = 3;
            return get("/users/" +
                           id(std::uniform_int_distribution<int>(1, catalog_.users)(random_)) +
                           "/timesheet",
                       "GET /users/{id}/timesheet");
          }
          return get("/backlogs/" + id(pick(catalog_.root_backlogs)) + "/tree",
                     "GET /backlogs/{id}/tree");
        case 2:
          return get("/users/" +
                         id(std::uniform_int_distribution<int>(1, catalog_.users)(random_)) +
                         "/timesheet",
                     "GET /users/{id}/timesheet");
        default:
          return std::nullopt;
      }
    case Kind::kAnalyst:
      switch (step) {
        case 0:
          iteration_ = pick(catalog_.iterations);
          return get("/iterations/" + id(iteration_) + "/burndown",
                     "GET /iterations/{id}/burndown");
        case 1: {
          // The velocity of a backlog that plans iterations, then one of its other sprints.
          std::vector<int> planning;
          for (const auto& [backlog, iterations] : catalog_.iterations_of_backlog) {
            if (!iterations.empty()) planning.push_back(backlog);
          }
          if (planning.empty()) return std::nullopt;
          backlog_ = pick(planning);
          return get("/backlogs/" + id(backlog_) + "/velocity", "GET /backlogs/{id}/velocity");
        }
        case 2:
          iteration_ = pick(catalog_.iterations_of_backlog.at(backlog_));
          return get("/iterations/" + id(iteration_) + "/burndown",
                     "GET /iterations/{id}/burndown");
        default:
          return std::nullopt;
      }
  }
  return std::nullopt;
}

double RouteStats::percentile(double q) const {
  if (latencies_ms.empty()) return 0;
  std::vector<double> sorted = latencies_ms;
  std::sort(sorted.begin(), sorted.end());
  const size_t index =
      std::min(sorted.size() - 1, static_cast<size_t>(std::lround(q * double(sorted.size() - 1))));
  return sorted[index];
}

double RouteStats::mean() const {
  if (latencies_ms.empty()) return 0;
  double sum = 0;
  for (double v : latencies_ms) sum += v;
  return sum / double(latencies_ms.size());
}

std::string RunReport::toJson() const {
  json routes_json = json::object();
  for (const auto& [route, stats] : routes) {
    routes_json[route] = {{"count", stats.count},
                          {"errors", stats.errors},
                          {"mean_ms", stats.mean()},
                          {"p50_ms", stats.percentile(0.5)},
                          {"p99_ms", stats.percentile(0.99)}};
  }
  return json{{"sent", sent},
              {"ok", ok},
              {"errors", errors},
              {"elapsed_s", elapsed_s},
              {"throughput_per_s", throughput()},
              {"routes", routes_json}}
      .dump(2);
}

Catalog discover(const std::string& target) {
  httplib::Client client(target);
  client.set_read_timeout(30, 0);
  auto products = client.Get("/products");
  if (!products || products->status != 200) {
    throw std::runtime_error("cannot list products at " + target +
                             (products ? " (HTTP " + std::to_string(products->status) + ")"
                                       : " (" + httplib::to_string(products.error()) + ")"));
  }
  Catalog catalog;
  const json list = json::parse(products->body, nullptr, false);
  if (!list.is_array()) throw std::runtime_error("GET /products did not return an array");
  for (const json& product : list) {
    for (const json& backlog : product.value("backlogs", json::array())) {
      const int id = backlog.value("id", 0);
      if (id == 0) continue;
      catalog.backlogs.push_back(id);
      if (backlog.value("parent", 0) == 0) catalog.root_backlogs.push_back(id);
      auto page = client.Get("/backlogs/" + std::to_string(id));
      if (!page || page->status != 200) continue;
      const json body = json::parse(page->body, nullptr, false);
      if (!body.is_object()) continue;
      for (const json& it : body.value("iterations", json::array())) {
        catalog.iterations_of_backlog[id].push_back(it.value("id", 0));
        catalog.iterations.push_back(it.value("id", 0));
      }
      for (const json& story : body.value("stories", json::array())) {
        catalog.stories.push_back(story.value("id", 0));
      }
    }
  }
  if (catalog.backlogs.empty() || catalog.stories.empty()) {
    throw std::runtime_error("the service at " + target + " has no backlogs or stories");
  }
  return catalog;
}

RunReport run(const RunConfig& config, const std::function<void(const std::string&)>& log) {
  const Catalog catalog = discover(config.target);
  RunReport report;
  std::mutex mutex;  // guards report and the release schedule
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + config.duration;
  Clock::time_point next_release = start;
  std::atomic<uint64_t> issued{0};
  std::atomic<bool> stop{false};

  // The next release time on the load shape's schedule; false once the run is over.
  auto ticket = [&](Clock::time_point& when) {
    std::lock_guard lock(mutex);
    if (config.max_requests && issued.load() >= config.max_requests) return false;
    if (next_release >= deadline || stop.load()) return false;
    ++issued;
    when = next_release;
    const double t = std::chrono::duration<double>(next_release - start).count();
    const double rate = std::max(0.1, config.load.rateAt(t));
    next_release +=
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1 / rate));
    // A worker that fell far behind does not build up an unbounded backlog of releases.
    next_release = std::max(next_release, Clock::now() - std::chrono::seconds(1));
    return true;
  };

  auto worker = [&](int index) {
    std::mt19937 random(config.seed + 7919u * uint32_t(index));
    httplib::Client client(config.target);
    client.set_keep_alive(true);
    client.set_read_timeout(60, 0);
    std::optional<Session> session;
    std::string last_body;
    Clock::time_point when;
    while (ticket(when)) {
      std::this_thread::sleep_until(when);
      std::optional<Request> request;
      while (!request) {
        if (!session) {
          session.emplace(pickKind(config.mix, random), catalog, random);
          last_body.clear();
        }
        request = session->next(last_body);
        if (!request) session.reset();
      }
      const auto sent = Clock::now();
      httplib::Result result = request->method == "POST"
                                   ? client.Post(request->path, request->body, "application/json")
                                   : client.Get(request->path);
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - sent).count();
      const bool ok = result && result->status < 400;
      last_body = result ? result->body : std::string();
      std::lock_guard lock(mutex);
      ++report.sent;
      RouteStats& stats = report.routes[request->route];
      ++stats.count;
      if (ok) {
        ++report.ok;
        stats.latencies_ms.push_back(ms);
      } else {
        ++report.errors;
        ++stats.errors;
        if (!result) session.reset();  // the connection broke: start over
      }
    }
  };

  std::vector<std::thread> workers;
  for (int i = 0; i < std::max(1, config.workers); ++i) workers.emplace_back(worker, i);

  // Progress once a second until every worker is done. Woken at once when they are: a plain
  // sleep held the join, and so the measured elapsed time, up to a second past the last request.
  std::condition_variable progress_wake;
  std::thread progress([&] {
    uint64_t last_sent = 0;
    Clock::time_point tick = start;
    std::unique_lock lock(mutex);
    while (true) {
      tick += std::chrono::seconds(1);
      if (progress_wake.wait_until(lock, tick, [&] { return stop.load(); })) break;
      const double t = std::chrono::duration<double>(Clock::now() - start).count();
      if (config.progress) {
        char line[200];
        std::snprintf(line, sizeof line,
                      "[workload] t=%5.1fs target=%5.1f/s achieved=%5.1f/s sent=%llu errors=%llu",
                      t, config.load.rateAt(t), double(report.sent - last_sent),
                      static_cast<unsigned long long>(report.sent),
                      static_cast<unsigned long long>(report.errors));
        log(line);
      }
      last_sent = report.sent;
    }
  });
  for (auto& w : workers) w.join();
  report.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
  {
    std::lock_guard lock(mutex);
    stop = true;
  }
  progress_wake.notify_all();
  progress.join();
  return report;
}

}  // namespace agile::workload
