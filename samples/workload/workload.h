// The workload generator's model: load shapes over time, user navigation patterns, and the
// runner that drives the sample service over HTTP with them.
//
// Load is open-loop: requests are released on a schedule that follows the chosen shape
// (stationary, seasonal, bursts); when the service falls behind, the workers send as fast as
// they can, so a slow change shows up as lower throughput and higher latency, as in production.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace agile::workload {

enum class Shape { kStationary, kSeasonal, kBursts };
std::optional<Shape> parseShape(const std::string& name);
const char* toString(Shape shape);

struct LoadShape {
  Shape shape = Shape::kSeasonal;
  double base_rate = 20;            // requests per second
  double seasonal_amplitude = 0.6;  // ±60 % around the base rate
  double period_s = 30;             // one "day" of the seasonal shape
  double burst_every_s = 15;        // a burst starts every N seconds ...
  double burst_length_s = 3;        // ... lasts this long ...
  double burst_factor = 4;          // ... at this multiple of the base rate

  // Target request rate t seconds into the run.
  double rateAt(double t) const;
};

// User navigation patterns: who uses the service, and how often (relative weights).
struct PatternMix {
  double planner = 3;  // products → backlog → iteration → planning candidates → move a story
  double developer = 5;  // iteration card → story → task → log hours → story effort
  double manager = 2;    // iteration metrics → backlog tree → a timesheet
  // Reports (burndown → backlog velocity → another burndown): the CPU-bound path. Off in the
  // default mix; `agile-workload --cpu-bound` runs it alone.
  double analyst = 0;
};

struct Request {
  std::string method;  // GET or POST
  std::string path;
  std::string body;
  std::string route;  // the route template, for per-route statistics
};

// What the generator knows about the dataset, discovered from the service's own API.
struct Catalog {
  std::vector<int> root_backlogs;
  std::vector<int> backlogs;
  std::map<int, std::vector<int>> iterations_of_backlog;
  std::vector<int> iterations;
  std::vector<int> stories;
  int users = 40;
};

// One user session: the next request depends on what the previous answers contained (a story
// id from a backlog page, a task id from a story page), as a person clicking through would.
class Session {
 public:
  enum class Kind { kPlanner, kDeveloper, kManager, kAnalyst };
  Session(Kind kind, const Catalog& catalog, std::mt19937& random);

  // The next request, or nullopt when the session is over. `last_body` is the previous answer.
  std::optional<Request> next(const std::string& last_body);
  Kind kind() const { return kind_; }

 private:
  int pick(const std::vector<int>& ids);

  Kind kind_;
  const Catalog& catalog_;
  std::mt19937& random_;
  int step_ = 0;
  int backlog_ = 0;
  int iteration_ = 0;
  int story_ = 0;
  int task_ = 0;
};

Session::Kind pickKind(const PatternMix& mix, std::mt19937& random);

struct RunConfig {
  std::string target;  // http://127.0.0.1:PORT
  LoadShape load;
  PatternMix mix;
  std::chrono::seconds duration{60};
  uint64_t max_requests = 0;  // 0 = bounded by duration only
  int workers = 4;
  uint32_t seed = 7;
  bool progress = true;
};

struct RouteStats {
  uint64_t count = 0;
  uint64_t errors = 0;
  std::vector<double> latencies_ms;
  double percentile(double q) const;
  double mean() const;
};

struct RunReport {
  uint64_t sent = 0;
  uint64_t ok = 0;
  uint64_t errors = 0;
  double elapsed_s = 0;
  std::map<std::string, RouteStats> routes;
  double throughput() const { return elapsed_s > 0 ? ok / elapsed_s : 0; }
  std::string toJson() const;
};

// Discovers the dataset through the API (GET /products, /backlogs/{id}). Throws on failure.
Catalog discover(const std::string& target);

// Runs the workload; `log` receives the progress lines.
RunReport run(const RunConfig& config, const std::function<void(const std::string&)>& log);

}  // namespace agile::workload
