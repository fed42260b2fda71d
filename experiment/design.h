// `perfhat-experiment design`: assigns participants to treatment and control, balanced on
// experience and self-rated performance skill (paper §V-C), reproducibly from a seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiment/study.h"

namespace perfhat::experiment {

struct Assignment {
  std::string participant;
  std::string group;  // "treatment" or "control"
};

struct Design {
  uint64_t seed = 0;
  std::vector<Assignment> assignments;  // in the study file's participant order
  double imbalance = 0;  // |Δ mean skill| / sd(skill) + |Δ mean experience| / sd(experience)
};

// Matched pairs: participants sorted by (skill, experience) are paired with their neighbour,
// and one of each pair goes to each group. Of kDesignDraws seeded random flips of the pairs the
// most balanced one is kept (rerandomization). Same study and seed => same design, on any
// platform (std::mt19937_64's sequence is fixed by the standard; no std distributions are used).
inline constexpr int kDesignDraws = 2000;
Design assignGroups(const Study& study, uint64_t seed);

// {"study","seed","method","imbalance","assignments":[{participant,group,experience_years,
//  performance_skill}],"balance":{"treatment":{n,experience_mean,skill_mean},"control":{…}},
//  "tasks":[{"id","type","measures"}]}
nlohmann::ordered_json designJson(const Study& study, const Design& design);

}  // namespace perfhat::experiment
