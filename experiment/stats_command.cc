#include "experiment/analysis.h"
#include "experiment/commands.h"

namespace perfhat::experiment {

int runStats(const StatsOptions& o, std::ostream& out) {
  const auto rows = parseMeasurementsCsv(readBoundedFile(o.csv), o.csv);
  out << analyse(rows, o.csv).dump(2) << "\n";
  return 0;
}

}  // namespace perfhat::experiment
