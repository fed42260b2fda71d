#include "experiment/design.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "experiment/measurements.h"

namespace perfhat::experiment {
namespace {

const std::string kStudy = PERFHAT_SOURCE_DIR "/samples/study/study.json";

Study syntheticStudy(int n) {
  nlohmann::json doc = {{"tasks", {{{"id", "T1"}, {"type", "regular"}, {"briefing", "BRIEF.md"}}}},
                        {"participants", nlohmann::json::array()}};
  for (int i = 0; i < n; ++i) {
    doc["participants"].push_back({{"id", "P" + std::to_string(i)},
                                   {"experience_years", 2 + (i * 7) % 13},
                                   {"performance_skill", 1 + (i * 3) % 5}});
  }
  // Briefings resolve against the study file's folder: the sample tasks' folder has BRIEF.md.
  return parseStudy(doc.dump(), PERFHAT_SOURCE_DIR "/samples/tasks/T1/study.json");
}

TEST(ExperimentDesign, SampleStudyParses) {
  const Study s = loadStudy(kStudy);
  ASSERT_EQ(s.tasks.size(), 4u);
  EXPECT_EQ(s.tasks[1].id, "T2");
  EXPECT_EQ(s.tasks[1].measures(), (std::vector<std::string>{"total", "fe", "rca"}));
  EXPECT_EQ(s.tasks[0].measures(), (std::vector<std::string>{"total"}));
  EXPECT_EQ(s.participants.size(), 20u);
}

TEST(ExperimentDesign, SameSeedSameDesignOtherSeedsDiffer) {
  const Study s = loadStudy(kStudy);
  const auto a = designJson(s, assignGroups(s, 42)).dump();
  EXPECT_EQ(a, designJson(s, assignGroups(s, 42)).dump());
  int differing = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    differing += designJson(s, assignGroups(s, seed)).dump() != a;
  }
  EXPECT_GE(differing, 4);  // 20 participants: thousands of balanced designs to choose from
}

// Balanced on both covariates: equal sizes (±1), per skill level at most 2 apart (pairs are
// neighbours in skill order), and group means close in units of the covariate's spread.
void expectBalanced(const Study& s, const Design& d) {
  std::map<std::string, int> size;
  std::map<int, int> skill_diff;
  double skill[2] = {0, 0}, years[2] = {0, 0};
  for (size_t i = 0; i < d.assignments.size(); ++i) {
    const bool t = d.assignments[i].group == "treatment";
    ++size[d.assignments[i].group];
    skill_diff[s.participants[i].performance_skill] += t ? 1 : -1;
    skill[t] += s.participants[i].performance_skill;
    years[t] += s.participants[i].experience_years;
  }
  EXPECT_LE(std::abs(size["treatment"] - size["control"]), 1);
  for (const auto& [level, diff] : skill_diff) EXPECT_LE(std::abs(diff), 2) << "skill " << level;
  const double nt = size["treatment"], nc = size["control"];
  EXPECT_LT(std::fabs(skill[1] / nt - skill[0] / nc), 0.35);
  EXPECT_LT(std::fabs(years[1] / nt - years[0] / nc), 1.0);
}

TEST(ExperimentDesign, GroupsAreBalancedOnSkillAndExperience) {
  const Study s = loadStudy(kStudy);
  for (uint64_t seed : {1u, 7u, 2026u}) expectBalanced(s, assignGroups(s, seed));
  const Study odd = syntheticStudy(21);
  const Design d = assignGroups(odd, 3);
  expectBalanced(odd, d);
  const auto j = designJson(odd, d);
  EXPECT_EQ(j["balance"]["treatment"]["n"].get<int>() + j["balance"]["control"]["n"].get<int>(),
            21);
}

std::string studyError(const std::string& text) {
  try {
    parseStudy(text, PERFHAT_SOURCE_DIR "/samples/study/bad.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ExperimentDesign, BadStudiesAreClearErrors) {
  const std::string task = R"({"id":"T1","type":"regular","briefing":"../tasks/T1/BRIEF.md"})";
  const std::string p1 = R"({"id":"P1","experience_years":3,"performance_skill":2})";
  auto study = [&](const std::string& tasks, const std::string& parts) {
    return R"({"tasks":[)" + tasks + R"(],"participants":[)" + parts + "]}";
  };
  EXPECT_EQ(studyError(study(
                task, p1 + "," + R"({"id":"P2","experience_years":3,"performance_skill":2})")),
            "");
  EXPECT_NE(studyError("{").find("bad.json: not valid JSON"), std::string::npos);
  EXPECT_NE(studyError(study(task, p1 + "," + p1)).find("duplicate participant id P1"),
            std::string::npos);
  EXPECT_NE(
      studyError(study(task, p1 + R"(,{"id":"P2","experience_years":3,"performance_skill":9})"))
          .find("participants[1] (P2): 'performance_skill' must be an integer from 1 to 5"),
      std::string::npos);
  EXPECT_NE(studyError(study(R"({"id":"T1","type":"regular","briefing":"nope.md"})", p1 + "," + p1))
                .find("tasks[0] (T1): briefing"),
            std::string::npos);
  EXPECT_NE(
      studyError(study(R"({"id":"T1","type":"fast","briefing":"x"})", p1)).find("type 'fast'"),
      std::string::npos);
  EXPECT_NE(studyError(study(task, p1)).find("at least 2 participants"), std::string::npos);
}

}  // namespace
}  // namespace perfhat::experiment
