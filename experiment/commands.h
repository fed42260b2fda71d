// The subcommands of perfhat-experiment, callable from tests without a process.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace perfhat::experiment {

struct StatsOptions {
  std::string csv;
};
int runStats(const StatsOptions& o, std::ostream& out);

struct DesignOptions {
  std::string study;
  uint64_t seed = 0;
};
int runDesign(const DesignOptions& o, std::ostream& out);

struct ReportOptions {
  std::string csv, study, out_dir;
  uint64_t seed = 1;
};
int runReport(const ReportOptions& o, std::ostream& out);

struct DashboardOptions {
  std::string handler, token, listen;
};
int runDashboard(const DashboardOptions& o, std::ostream& out);

struct RunOptions {
  std::string study, participant, session_dir;
  uint64_t seed = 1;
};
int runRun(const RunOptions& o, std::ostream& out);

struct OverheadOptions;
int runOverhead(const OverheadOptions& o, std::ostream& out);

}  // namespace perfhat::experiment
