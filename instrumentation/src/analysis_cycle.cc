// The analysis cycle: per-site metrics from the threads' slots, classified by the Tigris
// filter into the set of relevant sites the probes read; the sampling rate and cycle settings.
#include "engine_internal.h"
#include "phase1_window.h"
#include "selection_store.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace perfhat::detail {

void Engine::update_threshold(double rate) {
  rate = std::clamp(rate, 0.0, 1.0);
  uint64_t thr = rate >= 1.0 ? ~uint64_t{0} : static_cast<uint64_t>(std::ldexp(rate, 64));
  g_rate_threshold.store(thr, std::memory_order_relaxed);
}

void Engine::publish_relevant(std::unique_ptr<uint64_t[]> bits) {
  const uint64_t* p = bits.get();
  {
    Lock l(mu_);
    relevant_sets_.push_back(std::move(bits));  // old sets stay valid: readers never block
  }
  g_relevant.store(p, std::memory_order_release);
}

void Engine::analyze() {
  std::vector<tigris::EventMetrics> events;
  std::vector<uint32_t> ids;
  uint32_t nsites;
  {
    Lock l(mu_);
    reap_threads();
    nsites = static_cast<uint32_t>(sites_.size());
    if (!filter_) {
      cycles_.fetch_add(1);
      relevant_count_.store(nsites - 1);
      return;
    }
    auto t = totals();
    double nspt = ns_per_tick();
    for (uint32_t id = 1; id < nsites; ++id) {
      const SiteTotals& s = t[id];
      if (s.count == 0 || sites_[id].site->id.load() == kExcludedSite) continue;
      tigris::EventMetrics e;
      e.name = sites_[id].name;
      double n = static_cast<double>(s.count);
      // Mean of the timed calls (1 in timing_period, chosen independently of their duration).
      double mean_ns = s.timed > 0 ? static_cast<double>(s.sum_ticks) * nspt / s.timed : 0;
      double window_ns = static_cast<double>(s.last - s.first) * nspt;
      double wn = static_cast<double>(s.window_calls);
      using namespace tigris::metric;
      e.metrics[std::string(kInvocationFrequency)] = n;
      e.metrics[std::string(kExecutionTime)] = mean_ns;
      e.metrics[std::string(kErrorLevel)] = static_cast<double>(s.errors);
      // Over the window between the first and the last timed call, whose call count is exact.
      e.metrics[std::string(kInterArrivalTime)] = s.window_calls > 1 ? window_ns / (wn - 1) : 0;
      // Little's law: mean concurrent executions = arrival rate x mean duration.
      e.metrics[std::string(kConcurrencyLevel)] =
          s.window_calls > 1 && window_ns > 0 ? wn / window_ns * mean_ns : 0;
      if (s.size_n > 1) {
        double m = s.size_sum / static_cast<double>(s.size_n);
        double var = (s.size_sq - s.size_n * m * m) / static_cast<double>(s.size_n - 1);
        e.metrics[std::string(kComputationPattern)] = std::sqrt(std::max(0.0, var));
      } else {
        e.metrics[std::string(kComputationPattern)] = 0;
      }
      int zeros = 64 - std::popcount(s.sessions);
      e.metrics[std::string(kUserBehavior)] =
          s.sessions == 0 ? 0 : (zeros == 0 ? 64 * std::log(64.0) : -64 * std::log(zeros / 64.0));
      if (auto* scale = g_phase1_scale.load()) scale_phase1_metrics(e, scale(*sites_[id].site));
      for (const std::string& key : {sites_[id].name, sites_[id].function, sites_[id].mangled}) {
        auto it = static_.by_name.find(key);
        if (it != static_.by_name.end()) {
          for (const auto& [k, v] : it->second) e.metrics[k] = v;
          break;
        }
      }
      events.push_back(std::move(e));
      ids.push_back(id);
    }
  }
  std::unique_ptr<uint64_t[]> bits(new uint64_t[1 + (nsites + 63) / 64]());
  bits[0] = nsites;
  uint64_t relevant = 0;
  {
    Lock l(mu_);
    auto r = tigris::classify(*filter_, events, bindings_);
    if (!r.error.empty()) error_ = r.error;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (r.relevant[i]) {
        bits[1 + (ids[i] >> 6)] |= uint64_t{1} << (ids[i] & 63);
        ++relevant;
      }
    }
  }
  publish_relevant(std::move(bits));
  relevant_count_.store(relevant);
  cycles_.fetch_add(1);
}

void Engine::analyze_now() { analyze(); }

void Engine::carry_relevant(const std::vector<Site*>& sites) {
  std::vector<uint32_t> ids;
  uint32_t nsites;
  {
    Lock l(mu_);
    if (!filter_) return;  // every site relevant already
    for (Site* s : sites) {
      const uint32_t id = register_site(*s, nullptr);
      if (id != kExcludedSite) ids.push_back(id);
    }
    nsites = static_cast<uint32_t>(sites_.size());
  }
  std::unique_ptr<uint64_t[]> bits(new uint64_t[1 + (nsites + 63) / 64]());
  bits[0] = nsites;
  for (uint32_t id : ids) bits[1 + (id >> 6)] |= uint64_t{1} << (id & 63);
  publish_relevant(std::move(bits));
  relevant_count_.store(ids.size());
}

std::string Engine::selection_dir() {
  Lock l(mu_);
  return filter_ ? cfg_.selection_dir : std::string();
}

uint64_t Engine::selection_config() {
  Lock l(mu_);
  return selection_config_hash(cfg_.filter, cfg_.scope, cfg_.variant_manifest, cfg_.variant,
                               cfg_.replica);
}

bool Engine::set_filter(const std::string& f) {
  if (f.empty()) {
    {
      Lock l(mu_);
      filter_.reset();
      cfg_.filter.clear();
    }
    g_relevant.store(nullptr, std::memory_order_release);
    return true;
  }
  auto r = tigris::parse(f);
  Lock l(mu_);
  if (!r) {
    error_ = "filter: " + r.error->to_string();
    return false;
  }
  filter_ = std::move(r.root);
  cfg_.filter = f;
  return true;
}

void Engine::set_sampling_rate(double r) {
  auto* s = sampler_.load();
  if (!s) return;
  s->set_max_rate(std::clamp(r, 0.0, 1.0));
  update_threshold(s->rate());
}

double Engine::sampling_rate() {
  auto* s = sampler_.load();
  return s ? s->rate() : 0;
}

void Engine::set_cycle(double s) {
  if (s > 0) cycle_s_.store(s);
}

}  // namespace perfhat::detail
