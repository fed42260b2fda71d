// `perfhat-experiment report`: the study's results laid out like the paper (§V-G): Table II
// (mean and sd per group, Mann-Whitney p), normality and effect sizes, box plots like its
// figures, and the raw data, study and design embedded so a reader can re-run the analysis.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiment/design.h"
#include "experiment/measurements.h"
#include "experiment/study.h"

namespace perfhat::experiment {

struct ReportInput {
  Study study;
  Design design;
  std::vector<Observation> rows;
  nlohmann::ordered_json stats;  // analyse(rows)
  std::string csv_text;          // the measurements file as given
  std::string csv_name;
  std::string study_path;  // as given on the command line, for the re-run commands
};

// Fails with InputError (naming the line) when a row's participant is not in the study or its
// group is not the one the design assigned: a report must not mix up the groups.
void checkAgainstDesign(const ReportInput& in);

struct ReportFigure {
  std::string file;  // figure-total.svg
  std::string caption;
  std::string svg;
};
std::vector<ReportFigure> reportFigures(const ReportInput& in);

std::string reportMarkdown(const ReportInput& in, const std::vector<ReportFigure>& figures);
std::string reportHtml(const ReportInput& in, const std::vector<ReportFigure>& figures);

}  // namespace perfhat::experiment
