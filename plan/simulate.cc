#include "plan/simulate.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "common/json_parse.h"

namespace perfhat::plan {
namespace {

constexpr double kLogicCost[] = {10, 1, 0.1};  // light, medium, heavy probes
constexpr const char* kLogicName[] = {"overhead_light", "overhead_medium", "overhead_heavy"};

double percent(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

// The k units with the largest positive weight; ties by key so the result is reproducible.
std::set<std::size_t> topUnits(const std::vector<double>& weight,
                               const std::vector<std::string>& keys, std::size_t k) {
  std::vector<std::size_t> order;
  for (std::size_t u = 0; u < weight.size(); ++u)
    if (weight[u] > 0) order.push_back(u);
  auto better = [&](std::size_t a, std::size_t b) {
    return weight[a] != weight[b] ? weight[a] > weight[b] : keys[a] < keys[b];
  };
  if (order.size() > k) {
    std::nth_element(order.begin(), order.begin() + k, order.end(), better);
    order.resize(k);
  }
  return {order.begin(), order.end()};
}

std::vector<double> asDouble(const std::vector<std::uint64_t>& v) { return {v.begin(), v.end()}; }

}  // namespace

Simulator::Simulator(const ManifestMasks& m, double top_percent,
                     std::function<std::uint64_t()> skip)
    : top_percent_(top_percent), inventory_units_(m.inventory_units), skip_(std::move(skip)) {
  for (const auto& variant : m.variants)
    for (const std::string& key : variant) unitIndex(key);
  manifest_units_ = keys_.size();
  masks_.resize(m.variants.size());
  for (std::size_t v = 0; v < m.variants.size(); ++v) {
    for (const std::string& key : m.variants[v]) masks_[v].push_back(index_.find(key)->second);
    std::sort(masks_[v].begin(), masks_[v].end());
    masks_[v].erase(std::unique(masks_[v].begin(), masks_[v].end()), masks_[v].end());
  }
  sites_.resize(m.assignment.size());
  for (std::size_t r = 0; r < m.assignment.size(); ++r) sites_[r].variant = m.assignment[r];
}

std::size_t Simulator::unitIndex(std::string_view key) {
  auto it = index_.find(key);
  if (it != index_.end()) return it->second;
  std::size_t u = keys_.size();
  index_.emplace(std::string(key), u);
  keys_.emplace_back(key);
  for (auto* v : {&full_, &masked_, &dynamic_, &dynamic_masked_}) v->push_back(0);
  return u;
}

bool Simulator::probed(std::size_t variant, std::size_t unit) const {
  return unit < manifest_units_ && variant < masks_.size() &&
         std::binary_search(masks_[variant].begin(), masks_[variant].end(), unit);
}

std::string Simulator::record(std::size_t site, std::string_view key) {
  if (site >= sites_.size())
    return "site " + std::to_string(site) + " has no variant in the manifest's assignment (" +
           std::to_string(sites_.size()) + " replicas; plan with --replicas)";
  if (keys_.size() >= kMaxSimulatedUnits && index_.find(key) == index_.end())
    return "more than " + std::to_string(kMaxSimulatedUnits) + " distinct function keys";
  Site& s = sites_[site];
  if (!s.seen) {
    s.seen = true;
    s.full_countdown = skip_();
    s.masked_countdown = skip_();
  }
  std::size_t u = unitIndex(key);
  ++records_;
  ++full_[u];
  if (s.full_countdown-- == 0) {
    ++dynamic_[u];
    s.full_countdown = skip_();
  }
  if (probed(s.variant, u)) {
    ++masked_[u];
    if (s.masked_countdown-- == 0) {
      ++dynamic_masked_[u];
      s.masked_countdown = skip_();
    }
  }
  return "";
}

SimulationResult Simulator::finish() const {
  SimulationResult r;
  r.records = records_;
  const std::size_t n = keys_.size();
  std::vector<double> exposure(n, 0.0);
  for (const Site& s : sites_) {
    if (!s.seen) continue;
    ++r.sites;
    for (std::size_t u : masks_[s.variant]) exposure[u] += 1;
  }
  for (double& e : exposure) e = r.sites ? e / r.sites : 0;
  r.units_executed = std::count_if(full_.begin(), full_.end(), [](auto c) { return c > 0; });
  std::size_t universe = std::max(inventory_units_, r.units_executed);
  r.hot_k = std::max<std::size_t>(1, std::llround(top_percent_ / 100.0 * universe));
  const std::set<std::size_t> full_top = topUnits(asDouble(full_), keys_, r.hot_k);

  // `masked`: the technique sees a unit only on sites whose variant probes it (its exposure).
  auto score = [&](const char* name, const std::vector<std::uint64_t>& seen, bool masked,
                   bool sampled) {
    TechniqueScore t;
    t.name = name;
    t.sampled = sampled;
    std::size_t covered = std::count_if(seen.begin(), seen.end(), [](auto c) { return c > 0; });
    t.coverage = percent(covered, r.units_executed);
    auto overlap = [&](const std::vector<double>& weight) {
      std::set<std::size_t> top = topUnits(weight, keys_, r.hot_k);
      std::size_t both = 0;
      for (std::size_t u : top) both += full_top.count(u);
      return percent(both, r.hot_k);
    };
    t.top_hotspots = overlap(asDouble(seen));
    std::vector<double> normalised(n, 0.0);
    for (std::size_t u = 0; u < n; ++u)
      normalised[u] = masked && exposure[u] > 0 ? seen[u] / exposure[u] : double(seen[u]);
    t.top_hotspots_normalised = overlap(normalised);
    t.overhead = percent(std::accumulate(seen.begin(), seen.end(), 0.0), records_);
    return t;
  };
  r.techniques.push_back(score("variants", masked_, true, false));
  r.techniques.push_back(score("dynamic", dynamic_, false, true));
  r.techniques.push_back(score("dynamic+variants", dynamic_masked_, true, true));
  return r;
}

nlohmann::ordered_json simulationJson(const SimulationResult& r) {
  nlohmann::ordered_json techniques = nlohmann::ordered_json::array();
  for (const TechniqueScore& t : r.techniques) {
    nlohmann::ordered_json j = {{"name", t.name},
                                {"coverage", t.coverage},
                                {"top_hotspots", t.top_hotspots},
                                {"top_hotspots_normalised", t.top_hotspots_normalised},
                                {"overhead", t.overhead}};
    if (t.sampled)
      for (std::size_t i = 0; i < 3; ++i) j[kLogicName[i]] = t.overhead * (1 + kLogicCost[i]);
    techniques.push_back(std::move(j));
  }
  return {{"records", r.records},
          {"sites", r.sites},
          {"units_executed", r.units_executed},
          {"hot_k", r.hot_k},
          {"techniques", techniques}};
}

std::string parseManifestMasks(std::string_view text, ManifestMasks& out) {
  out = ManifestMasks{};
  JsonParse parsed = parseJson(text, 8);
  if (!parsed.ok()) return "manifest: " + parsed.error;
  const nlohmann::json& m = parsed.value;
  if (!m.is_object() || !m.contains("variants") || !m["variants"].is_array() ||
      m["variants"].empty())
    return "manifest: no \"variants\" array (expected the output of perfhat-plan variants)";
  for (const nlohmann::json& v : m["variants"]) {
    if (!v.is_object() || !v.contains("units") || !v["units"].is_array())
      return "manifest: a variant without a \"units\" array";
    std::vector<std::string> keys;
    for (const nlohmann::json& u : v["units"]) {
      if (!u.is_string()) return "manifest: a unit that is not a string";
      keys.push_back(u.get<std::string>());
    }
    out.variants.push_back(std::move(keys));
  }
  if (m.contains("units") && m["units"].is_number_unsigned())
    out.inventory_units = m["units"].get<std::size_t>();
  if (m.contains("assignment")) {
    if (!m["assignment"].is_array()) return "manifest: \"assignment\" must be an array";
    for (const nlohmann::json& a : m["assignment"]) {
      if (!a.is_number_unsigned() || a.get<std::size_t>() >= out.variants.size())
        return "manifest: \"assignment\" names a variant that does not exist";
      out.assignment.push_back(a.get<std::size_t>());
    }
  } else {
    out.assignment.resize(out.variants.size());
    std::iota(out.assignment.begin(), out.assignment.end(), 0);
  }
  return "";
}

}  // namespace perfhat::plan
