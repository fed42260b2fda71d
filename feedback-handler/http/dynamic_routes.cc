#include "feedback-handler/http/dynamic_routes.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/from_chars_whole.h"
#include "feedback-handler/dynamic/call_graph.h"
#include "feedback-handler/dynamic/graph_export.h"
#include "feedback-handler/ingest/intake_limits.h"
#include "feedback-handler/store/store.h"
#include "feedback-handler/util/rfc3339.h"

namespace perfhat::handler {
namespace {

using dynamic::CallGraph;
using dynamic::GraphMetrics;
using nlohmann::json;

// Bounds of the query parameters (a larger value is a 400, not a larger answer).
constexpr uint64_t kMaxNeighbours = 1000;  // callers / callees listed per function
constexpr uint64_t kMaxExecutions = 1000;  // rows of a CSV matrix (window / step_minutes)
constexpr uint64_t kMaxDepth = 10;         // dot neighbourhood
constexpr uint64_t kMaxDotNodes = 2000;
constexpr size_t kTopDemand = 20;
// Derived metrics are reused while the store's cursor has not moved, for at most this long (the
// default window slides with the clock), in at most this many (service, window) entries.
constexpr auto kCacheTtl = std::chrono::seconds(5);
constexpr size_t kCacheEntries = 64;

void fail(httplib::Response& res, int status, const std::string& code, const std::string& msg) {
  res.status = status;
  res.set_content(json{{"error", {{"code", code}, {"message", msg}}}}.dump(
                      -1, ' ', false, json::error_handler_t::replace),
                  "application/json");
}

uint64_t param(const httplib::Request& req, const char* name, uint64_t def, uint64_t lo,
               uint64_t hi) {
  if (!req.has_param(name)) return def;
  const std::string v = req.get_param_value(name);
  uint64_t out = 0;
  if (!fromCharsWhole(v, out) || out < lo || out > hi) {
    throw std::invalid_argument(std::string(name) + " must be an integer in [" +
                                std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return out;
}

struct Query {
  std::string service, version, key;
  std::optional<TimeWindow> range;
};

Query query(const httplib::Request& req) {
  Query q;
  q.service = req.get_param_value("service");
  q.version = req.get_param_value("version");
  q.key = req.get_param_value("key");
  if (q.service.size() > IntakeLimits::kMaxDimensionBytes ||
      q.version.size() > IntakeLimits::kMaxDimensionBytes) {
    throw std::invalid_argument("service and version are at most " +
                                std::to_string(IntakeLimits::kMaxDimensionBytes) + " bytes");
  }
  if (q.key.size() > IntakeLimits::kMaxKeyBytes) {
    throw std::invalid_argument("key is longer than " + std::to_string(IntakeLimits::kMaxKeyBytes) +
                                " bytes");
  }
  if (req.has_param("from") || req.has_param("to")) {
    q.range = TimeWindow{req.get_param_value("from"), req.get_param_value("to")};
  }
  return q;
}

// The window's rows as one graph, or (step_minutes > 0) as one graph per step, by start minute.
struct Read {
  TimeWindow window;
  CallGraph whole;
  std::map<int64_t, CallGraph> steps;
  int64_t first_bucket = INT64_MAX, last_bucket = INT64_MIN;  // of the rows read
};

Read read(Store& store, const Query& q, int64_t step_minutes) {
  Read r;
  std::vector<std::string> known;
  r.window = store.scanCallRows(
      q.service, q.version, q.range,
      [&](const Store::CallRow& row) {
        r.first_bucket = std::min(r.first_bucket, row.bucket);
        r.last_bucket = std::max(r.last_bucket, row.bucket);
        if (step_minutes > 0) {
          const int64_t start =
              row.bucket - (((row.bucket % step_minutes) + step_minutes) % step_minutes);
          r.steps[start].addRow(row.kind, row.key, row.sub, row.sketch);
        } else {
          r.whole.addRow(row.kind, row.key, row.sub, row.sketch);
        }
      },
      [&](std::string_view k) { known.emplace_back(k); });
  for (const std::string& k : known) {
    r.whole.addKnown(k);
    for (auto& [start, g] : r.steps) g.addKnown(k);
  }
  return r;
}

// One query's derived metrics. An editor asks for every function of a file at once, and each
// answer needs the whole service's graph (demand rank, skew): derived once, shared by all.
struct Derived {
  TimeWindow window;
  // The part of the window the service's data covers: from its first minute with rows to the end
  // of its last (a service that started an hour ago has rates over that hour, not the window).
  std::optional<std::pair<int64_t, int64_t>> covered_ns;
  GraphMetrics metrics;
};

Derived derived(const Read& r) {
  Derived d{r.window, std::nullopt, dynamic::derive(r.whole)};
  if (r.first_bucket <= r.last_bucket) {
    const int64_t from =
        std::max(r.first_bucket * kBucketNs, parseRfc3339(r.window.from).value_or(0));
    const int64_t to =
        std::min((r.last_bucket + 1) * kBucketNs, parseRfc3339(r.window.to).value_or(INT64_MAX));
    if (to > from) d.covered_ns = {from, to};
  }
  return d;
}

class MetricsCache {
 public:
  std::shared_ptr<const Derived> get(Store& store, const Query& q) {
    const uint64_t cursor = store.cursor();
    const auto now = std::chrono::steady_clock::now();
    std::string k = q.service + '\0' + q.version;
    if (q.range) k += '\0' + q.range->from + '\0' + q.range->to;
    {
      std::lock_guard lock(mu_);
      const auto it = entries_.find(k);
      if (it != entries_.end() && it->second.cursor == cursor && now - it->second.at < kCacheTtl) {
        return it->second.derived;
      }
    }
    Read r = read(store, q, 0);
    auto d = std::make_shared<const Derived>(derived(r));
    std::lock_guard lock(mu_);
    if (entries_.size() >= kCacheEntries) entries_.clear();
    entries_[k] = Slot{cursor, now, d};
    return d;
  }

 private:
  struct Slot {
    uint64_t cursor = 0;
    std::chrono::steady_clock::time_point at;
    std::shared_ptr<const Derived> derived;
  };
  std::mutex mu_;
  std::map<std::string, Slot> entries_;  // guarded by mu_
};

json neighbours(const std::vector<dynamic::Neighbour>& v, size_t limit) {
  json a = json::array();
  for (size_t i = 0; i < v.size() && i < limit; ++i) {
    a.push_back({{"key", v[i].key}, {"count", v[i].count}});
  }
  return a;
}

json skew(const GraphMetrics& m) {
  if (!m.skew) return nullptr;
  return {{"alpha", m.skew->alpha},
          {"k_from", m.skew->k_from},
          {"k_to", m.skew->k_to},
          {"functions", m.skew->values}};
}

json window(const TimeWindow& w) { return {{"from", w.from}, {"to", w.to}}; }

json coverage(const Derived& d) {
  if (!d.covered_ns) return nullptr;
  return {{"from", formatRfc3339(d.covered_ns->first)},
          {"to", formatRfc3339(d.covered_ns->second)}};
}

// Calls per hour over the covered part of the window (the lens' "1.2 M calls/h").
json perHour(double visits, const Derived& d) {
  if (!d.covered_ns) return nullptr;
  return visits * 3.6e12 / static_cast<double>(d.covered_ns->second - d.covered_ns->first);
}

json functionJson(const dynamic::FunctionMetrics& f, const Derived& d, const Query& q,
                  size_t limit) {
  const GraphMetrics& m = d.metrics;
  size_t ranked = 0;
  for (const auto& [k, g] : m.functions) ranked += g.demand_rank > 0;
  json self = {{"p50_ns", f.self_p50_ns ? json(*f.self_p50_ns) : json(nullptr)},
               {"mean_ns", f.visits > 0 ? json(f.self_mean_ns) : json(nullptr)}};
  json inclusive = {{"p50_ns", f.visits > 0 ? json(f.inclusive_p50_ns) : json(nullptr)},
                    {"mean_ns", f.visits > 0 ? json(f.inclusive_mean_ns) : json(nullptr)}};
  return {{"key", f.key},
          {"service", q.service},
          {"version", q.version},
          {"window", window(d.window)},
          {"coverage", coverage(d)},
          {"visits", f.visits},
          {"calls_per_hour", perHour(f.visits, d)},
          {"callers", neighbours(f.callers, limit)},
          {"callees", neighbours(f.callees, limit)},
          {"fan_in", f.callers.size()},
          {"fan_out", f.callees.size()},
          {"self", std::move(self)},
          {"inclusive", std::move(inclusive)},
          {"demand_ns", f.demand_ns},
          {"demand_rank", f.demand_rank > 0 ? json(f.demand_rank) : json(nullptr)},
          {"ranked_functions", ranked},
          {"leaf", f.leaf},
          {"never_called", f.never_called},
          {"skew", skew(m)}};
}

json summaryJson(const Derived& d, const Query& q) {
  const GraphMetrics& m = d.metrics;
  std::vector<const dynamic::FunctionMetrics*> ranked;
  for (const auto& [k, f] : m.functions) {
    if (f.demand_rank > 0) ranked.push_back(&f);
  }
  std::sort(ranked.begin(), ranked.end(),
            [](auto* a, auto* b) { return a->demand_rank < b->demand_rank; });
  json top = json::array();
  for (size_t i = 0; i < ranked.size() && i < kTopDemand; ++i) {
    top.push_back({{"key", ranked[i]->key},
                   {"visits", ranked[i]->visits},
                   {"demand_ns", ranked[i]->demand_ns},
                   {"demand_rank", ranked[i]->demand_rank}});
  }
  return {{"service", q.service},
          {"version", q.version},
          {"window", window(d.window)},
          {"coverage", coverage(d)},
          {"functions", m.functions.size()},
          {"called", ranked.size()},
          {"edges", m.edges},
          {"never_called", m.never_called},
          {"leaves", m.leaves},
          {"skew", skew(m)},
          {"top_demand", std::move(top)}};
}

// Store failures → 503, bad input → 400 (as the server's other reads).
template <typename Fn>
auto guarded(Fn fn) {
  return [fn](const httplib::Request& req, httplib::Response& res) {
    try {
      fn(req, res);
    } catch (const StoreError& e) {
      fail(res, 503, "unavailable", std::string("storage unavailable: ") + e.what());
    } catch (const std::invalid_argument& e) {
      fail(res, 400, "invalid_argument", e.what());
    }
  };
}

}  // namespace

void registerDynamicRoutes(httplib::Server& s, Store& store,
                           std::function<void(httplib::Response&)> before_read) {
  auto cache = std::make_shared<MetricsCache>();
  s.Get("/v1/dynamic",
        guarded([&store, before_read, cache](const httplib::Request& req, httplib::Response& res) {
          const Query q = query(req);
          const size_t limit = param(req, "limit", 50, 0, kMaxNeighbours);
          if (q.key.empty() && !req.has_param("service")) {
            throw std::invalid_argument("missing ?key= (or ?service= for the service summary)");
          }
          before_read(res);
          const std::shared_ptr<const Derived> d = cache->get(store, q);
          if (q.key.empty()) return res.set_content(summaryJson(*d, q).dump(), "application/json");
          const auto it = d->metrics.functions.find(q.key);
          if (it == d->metrics.functions.end()) {
            return fail(res, 404, "not_found",
                        "no calls and no probe of key " + q.key +
                            (q.service.empty() ? "" : " in service " + q.service));
          }
          res.set_content(functionJson(it->second, *d, q, limit).dump(), "application/json");
        }));

  s.Get("/v1/dynamic/graph",
        guarded([&store, before_read, cache](const httplib::Request& req, httplib::Response& res) {
          const Query q = query(req);
          const std::string format =
              req.has_param("format") ? req.get_param_value("format") : "dot";
          if (format != "dot" && format != "csv") {
            throw std::invalid_argument("format must be dot or csv");
          }
          const std::string matrix = req.has_param("matrix") ? req.get_param_value("matrix") : "vc";
          if (matrix != "vc" && matrix != "fi" && matrix != "fo" && matrix != "edges") {
            throw std::invalid_argument("matrix must be vc, fi, fo or edges");
          }
          const bool steps = format == "csv" && matrix != "edges";
          const auto step = static_cast<int64_t>(
              param(req, "step_minutes", steps ? 60 : 0, steps ? 1 : 0, 7 * 24 * 60));
          dynamic::DotOptions dot;
          dot.focus = q.key;
          dot.depth = param(req, "depth", 2, 0, kMaxDepth);
          dot.max_nodes = param(req, "max_nodes", 200, 1, kMaxDotNodes);
          before_read(res);
          if (!steps) {
            const std::shared_ptr<const Derived> d = cache->get(store, q);
            if (format == "dot") {
              return res.set_content(dynamic::toDot(d->metrics, dot),
                                     "text/vnd.graphviz; charset=utf-8");
            }
            return res.set_content(dynamic::edgesCsv(d->metrics), "text/csv; charset=utf-8");
          }
          const Read r = read(store, q, step);
          if (r.steps.size() > kMaxExecutions) {
            throw std::invalid_argument("more than " + std::to_string(kMaxExecutions) +
                                        " windows: raise step_minutes");
          }
          std::vector<dynamic::Execution> ex;
          for (const auto& [start, g] : r.steps) {
            ex.push_back({formatRfc3339(start * kBucketNs), dynamic::derive(g)});
          }
          const dynamic::Matrix which = matrix == "vc"   ? dynamic::Matrix::kVisits
                                        : matrix == "fi" ? dynamic::Matrix::kFanIn
                                                         : dynamic::Matrix::kFanOut;
          res.set_content(dynamic::matrixCsv(ex, which), "text/csv; charset=utf-8");
        }));
}

}  // namespace perfhat::handler
