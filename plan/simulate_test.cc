// The award functions on a hand-computed example.
#include "plan/simulate.h"

#include <gtest/gtest.h>

namespace perfhat::plan {
namespace {

// U = {a, b, c, d}; variant 0 probes {a, b}, variant 1 probes {c}; replica r runs variant r.
// Site 0 runs a a a c, site 1 runs c b d d d (9 records; Full: a 3, b 1, c 2, d 3).
ManifestMasks example() {
  ManifestMasks m;
  m.inventory_units = 4;
  m.variants = {{"a", "b"}, {"c"}};
  m.assignment = {0, 1};
  return m;
}

SimulationResult replay(std::uint64_t fixed_skip, double top_percent = 50) {
  Simulator sim(example(), top_percent, [fixed_skip] { return fixed_skip; });
  for (const char* k : {"a", "a", "a", "c"}) EXPECT_EQ(sim.record(0, k), "");
  for (const char* k : {"c", "b", "d", "d", "d"}) EXPECT_EQ(sim.record(1, k), "");
  return sim.finish();
}

TEST(Simulate, VariantsHandComputed) {
  SimulationResult r = replay(1);
  EXPECT_EQ(r.records, 9u);
  EXPECT_EQ(r.sites, 2u);
  EXPECT_EQ(r.units_executed, 4u);
  EXPECT_EQ(r.hot_k, 2u);  // 50 % of 4 units
  const TechniqueScore& v = r.techniques.at(0);
  EXPECT_EQ(v.name, "variants");
  // Seen: a 3 (site 0 probes a; c is not in its mask), c 1 (site 1 probes only c).
  EXPECT_DOUBLE_EQ(v.coverage, 50.0);           // {a, c} of {a, b, c, d}
  EXPECT_DOUBLE_EQ(v.overhead, 100.0 * 4 / 9);  // 4 of 9 probe executions
  EXPECT_DOUBLE_EQ(v.top_hotspots, 50.0);       // Full top-2 {a, d} (3 each), technique {a, c}
  // Exposure: each unit is probed on 1 of 2 sites, so normalising keeps the order.
  EXPECT_DOUBLE_EQ(v.top_hotspots_normalised, 50.0);
}

TEST(Simulate, DynamicHandComputed) {
  // Skip 1: the 2nd, 4th, … record of each site's stream is sampled.
  SimulationResult r = replay(1);
  const TechniqueScore& d = r.techniques.at(1);
  EXPECT_EQ(d.name, "dynamic");
  // Site 0 samples a (2nd) and c (4th); site 1 samples b and the first d.
  EXPECT_DOUBLE_EQ(d.coverage, 100.0);
  EXPECT_DOUBLE_EQ(d.overhead, 100.0 * 4 / 9);
  EXPECT_DOUBLE_EQ(d.top_hotspots, 50.0);             // all at 1: by key {a, b}; Full {a, d}
  EXPECT_DOUBLE_EQ(d.top_hotspots_normalised, 50.0);  // every probe on: nothing to normalise
  const TechniqueScore& dv = r.techniques.at(2);
  EXPECT_EQ(dv.name, "dynamic+variants");
  // Masked streams: site 0 a a a → the 2nd a; site 1 c → nothing.
  EXPECT_DOUBLE_EQ(dv.coverage, 25.0);
  EXPECT_DOUBLE_EQ(dv.overhead, 100.0 / 9);
  EXPECT_DOUBLE_EQ(dv.top_hotspots, 50.0);
  auto json = simulationJson(r);
  EXPECT_DOUBLE_EQ(json["techniques"][1]["overhead_light"].get<double>(), 11 * 100.0 * 4 / 9);
  EXPECT_FALSE(json["techniques"][0].contains("overhead_light"));
}

TEST(Simulate, SkipZeroSamplesEverything) {
  SimulationResult r = replay(0);
  const TechniqueScore& d = r.techniques.at(1);
  EXPECT_DOUBLE_EQ(d.coverage, 100.0);
  EXPECT_DOUBLE_EQ(d.overhead, 100.0);
  EXPECT_DOUBLE_EQ(d.top_hotspots, 100.0);
  EXPECT_DOUBLE_EQ(r.techniques[2].overhead, r.techniques[0].overhead);
}

TEST(Simulate, UnknownSiteIsAnError) {
  Simulator sim(example(), 5, [] { return 0; });
  EXPECT_NE(sim.record(2, "a").find("site 2"), std::string::npos);
}

TEST(Simulate, ManifestParsing) {
  ManifestMasks m;
  EXPECT_EQ(parseManifestMasks(R"J({"units":3,"variants":[{"id":0,"units":["f(int, char)"]},
            {"id":1,"units":["g"]}],"assignment":[0,1,0]})J",
                               m),
            "");
  EXPECT_EQ(m.inventory_units, 3u);
  EXPECT_EQ(m.assignment, (std::vector<std::size_t>{0, 1, 0}));
  EXPECT_EQ(m.variants[0][0], "f(int, char)");
  EXPECT_NE(parseManifestMasks(R"({"variants":[{"units":["a"]}],"assignment":[1]})", m), "");
  EXPECT_NE(parseManifestMasks("[]", m).find("variants"), std::string::npos);
  EXPECT_NE(parseManifestMasks("{", m).find("manifest"), std::string::npos);
}

}  // namespace
}  // namespace perfhat::plan
