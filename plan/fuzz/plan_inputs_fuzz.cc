// Fuzz target: every file perfhat-plan reads (class file, units list, frequency profile, manifest)
// from the same bytes. Each must parse or give an error, never crash; an accepted class file is
// solved and the plans must respect the budget.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "plan/budget.h"
#include "plan/classes_file.h"
#include "plan/frequency_groups.h"
#include "plan/simulate.h"
#include "plan/units_file.h"

namespace {

constexpr std::size_t kMaxSolvedClasses = 12;  // keeps the exact search cheap per input

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace perfhat::plan;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ClassFile classes = parseClassFile(text);
  check(classes.ok() != classes.classes.empty());
  if (classes.ok() && classes.classes.size() <= kMaxSolvedClasses) {
    double max_f = 0;
    for (const EventClass& c : classes.classes) max_f += c.frequency_hz / 2;
    RatePlan rates;
    if (solveRates(classes.classes, max_f, rates)) {
      double used = 0;
      for (std::size_t i = 0; i < rates.fraction.size(); ++i) {
        check(rates.fraction[i] >= 0 && rates.fraction[i] <= 1);
        used += rates.fraction[i] * classes.classes[i].frequency_hz;
      }
      check(used <= max_f * (1 + 1e-9) + 1e-9);
    }
    ProbeResult exact = solveProbing(classes.classes, max_f, false);
    ProbeResult approx = solveProbingApprox(classes.classes, max_f, true);
    check(exact.best.probing_hz >= 0 && approx.best.probing_hz >= 0);
    check(approx.best.value >= 0.5 * exact.best.value - 1e-6 * (1 + exact.best.value));
  }
  UnitsFile units = parseUnits(text);
  check(units.ok() != units.units.empty());
  FrequencyProfile profile = parseFrequencyProfile(text);
  if (profile.ok() && units.ok() && units.units.size() >= 2)
    check(frequencyBlocks(units.units, profile, 2, 3).size() <= kFrequencyGroups);
  ManifestMasks masks;
  if (parseManifestMasks(text, masks).empty()) {
    Simulator sim(masks, 5, [] { return 0; });
    for (std::size_t site = 0; site < masks.assignment.size() && site < 4; ++site)
      check(sim.record(site, "f()").empty());
    (void)sim.finish();
  }
  return 0;
}
