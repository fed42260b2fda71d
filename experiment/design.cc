#include "experiment/design.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "experiment/commands.h"

namespace perfhat::experiment {
namespace {

struct GroupMeans {
  size_t n = 0;
  double experience = 0, skill = 0;
};

GroupMeans means(const Study& study, const std::vector<bool>& treated, bool group) {
  GroupMeans m;
  for (size_t i = 0; i < treated.size(); ++i) {
    if (treated[i] != group) continue;
    ++m.n;
    m.experience += study.participants[i].experience_years;
    m.skill += study.participants[i].performance_skill;
  }
  if (m.n) {
    m.experience /= static_cast<double>(m.n);
    m.skill /= static_cast<double>(m.n);
  }
  return m;
}

double spread(const std::vector<double>& xs) {
  double mean = 0, ss = 0;
  for (double x : xs) mean += x / static_cast<double>(xs.size());
  for (double x : xs) ss += (x - mean) * (x - mean);
  const double sd = xs.size() > 1 ? std::sqrt(ss / static_cast<double>(xs.size() - 1)) : 0;
  return sd > 0 ? sd : 1;  // a constant covariate cannot be unbalanced
}

}  // namespace

Design assignGroups(const Study& study, uint64_t seed) {
  const auto& ps = study.participants;
  std::vector<size_t> order(ps.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (ps[a].performance_skill != ps[b].performance_skill) {
      return ps[a].performance_skill < ps[b].performance_skill;
    }
    if (ps[a].experience_years != ps[b].experience_years) {
      return ps[a].experience_years < ps[b].experience_years;
    }
    return ps[a].id < ps[b].id;
  });
  std::vector<double> skills, years;
  for (const auto& p : ps) {
    skills.push_back(p.performance_skill);
    years.push_back(p.experience_years);
  }
  const double sd_skill = spread(skills), sd_years = spread(years);

  std::mt19937_64 rng(seed);
  std::vector<bool> best;
  double best_imbalance = INFINITY;
  std::vector<bool> treated(ps.size());
  for (int draw = 0; draw < kDesignDraws; ++draw) {
    for (size_t k = 0; k + 1 < order.size(); k += 2) {
      const bool first_treated = rng() >> 63;
      treated[order[k]] = first_treated;
      treated[order[k + 1]] = !first_treated;
    }
    if (order.size() % 2) treated[order.back()] = rng() >> 63;
    const GroupMeans t = means(study, treated, true), c = means(study, treated, false);
    const double imbalance =
        std::fabs(t.skill - c.skill) / sd_skill + std::fabs(t.experience - c.experience) / sd_years;
    if (imbalance < best_imbalance) {
      best_imbalance = imbalance;
      best = treated;
    }
  }
  Design d;
  d.seed = seed;
  d.imbalance = best_imbalance;
  for (size_t i = 0; i < ps.size(); ++i) {
    d.assignments.push_back({ps[i].id, best[i] ? "treatment" : "control"});
  }
  return d;
}

nlohmann::ordered_json designJson(const Study& study, const Design& design) {
  using json = nlohmann::ordered_json;
  std::vector<bool> treated;
  json assignments = json::array();
  for (size_t i = 0; i < design.assignments.size(); ++i) {
    const auto& a = design.assignments[i];
    const auto& p = study.participants[i];
    treated.push_back(a.group == "treatment");
    assignments.push_back({{"participant", a.participant},
                           {"group", a.group},
                           {"experience_years", p.experience_years},
                           {"performance_skill", p.performance_skill}});
  }
  auto balance = [&](bool group) {
    const GroupMeans m = means(study, treated, group);
    return json{{"n", m.n}, {"experience_mean", m.experience}, {"skill_mean", m.skill}};
  };
  json tasks = json::array();
  for (const auto& t : study.tasks) {
    tasks.push_back({{"id", t.id}, {"type", t.type}, {"measures", t.measures()}});
  }
  return json{{"study", study.name},
              {"seed", design.seed},
              {"method", "matched pairs on (performance skill, experience); the most balanced of " +
                             std::to_string(kDesignDraws) + " seeded draws"},
              {"imbalance", design.imbalance},
              {"assignments", std::move(assignments)},
              {"balance", {{"treatment", balance(true)}, {"control", balance(false)}}},
              {"tasks", std::move(tasks)}};
}

int runDesign(const DesignOptions& o, std::ostream& out) {
  const Study study = loadStudy(o.study);
  out << designJson(study, assignGroups(study, o.seed)).dump(2) << "\n";
  return 0;
}

}  // namespace perfhat::experiment
