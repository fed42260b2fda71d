// Box plots as standalone SVG, shaped like the paper's figures: for each category (a task and
// measure) one box per group, side by side, on a shared seconds axis.
#pragma once

#include <string>
#include <vector>

namespace perfhat::experiment {

struct BoxStats {
  double q1 = 0, median = 0, q3 = 0;
  double whisker_low = 0, whisker_high = 0;  // most extreme values within 1.5 IQR (Tukey)
  std::vector<double> outliers;
};
// Quartiles by linear interpolation between order statistics (numpy's default).
BoxStats boxStats(std::vector<double> xs);

struct BoxCategory {
  std::string label;                        // "T2 FE"
  std::vector<std::vector<double>> groups;  // one sample per series, in series order
};

struct BoxSeries {
  std::string name;   // legend text, "Treatment (perfhat)"
  std::string color;  // CSS colour
};

std::string boxPlotSvg(const std::string& title, const std::vector<BoxSeries>& series,
                       const std::vector<BoxCategory>& categories);

// &, <, >, " and ' as entities, for text in HTML and SVG.
std::string escapeXml(const std::string& s);

}  // namespace perfhat::experiment
