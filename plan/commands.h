// The subcommands of perfhat-plan, called by main.cc after the command line is parsed. Each
// prints its JSON on stdout and returns the exit code: 0, or 2 with the reason on stderr.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace perfhat::plan {

struct BudgetOptions {
  std::string classes_path;
  std::optional<double> max_f;
  std::optional<double> max_overhead;  // allowed extra CPU share, e.g. 0.05 for 5 %
  std::optional<double> detect_cost_ns;
  std::optional<double> report_cost_ns;
  bool probing = false;
  bool local_search = false;
};

struct VariantsOptions {
  std::string units_path;
  std::size_t h_bound = 0;
  std::size_t variants = 0;
  std::string strategy = "grb";
  std::string groups_path;  // empty: no grouping
  std::string history_dir;  // empty: no history
  std::optional<std::uint64_t> seed;
  std::string release;  // empty: the next number in the history
  std::optional<std::size_t> replicas;
};

struct SimulateOptions {
  std::string manifest_path;
  std::string trace_path;
  double top_percent = 5;
  std::uint64_t max_skip = 99;  // Dynamic: uniform skip in [0, max_skip] between samples
  std::optional<std::uint64_t> seed;
};

struct CalibrateOptions {
  std::string units_path;
  double target_overhead = 0;   // extra CPU share, e.g. 0.05 for 5 %
  std::size_t repetitions = 3;  // runs per measurement; the median counts
  double timeout_s = 600;       // per run
  std::optional<std::uint64_t> seed;
  std::string work_dir;                       // where the trial manifest is written (default /tmp)
  std::vector<std::string> command;           // the benchmark, linked with libperfhat
  std::vector<std::string> baseline_command;  // optional: a build without probes
};

int runBudget(const BudgetOptions& options);
int runCalibrate(const CalibrateOptions& options);
int runVariants(const VariantsOptions& options);
int runSimulate(const SimulateOptions& options);

}  // namespace perfhat::plan
