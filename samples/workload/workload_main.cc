// agile-workload: drives the sample service with a bounded, shaped load.
//
//   agile-workload --target http://127.0.0.1:PORT [--shape stationary|seasonal|bursts]
//                  [--rate 20] [--duration 60] [--requests N] [--workers 4] [--seed 7]
//                  [--mix planner:3,developer:5,manager:2[,analyst:N] | --cpu-bound]
//                  [--report FILE.json] [--quiet]
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/cli.h"
#include "samples/agile/cli.h"
#include "samples/workload/workload.h"

namespace {

bool parseMix(const std::string& text, agile::workload::PatternMix& mix) {
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, ',')) {
    const auto colon = part.find(':');
    if (colon == std::string::npos) return false;
    const auto weight = agile::cli::parseDouble(part.substr(colon + 1));
    if (!weight || *weight < 0) return false;
    const std::string name = part.substr(0, colon);
    if (name == "planner")
      mix.planner = *weight;
    else if (name == "developer")
      mix.developer = *weight;
    else if (name == "manager")
      mix.manager = *weight;
    else if (name == "analyst")
      mix.analyst = *weight;
    else
      return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "Sends user sessions (planner, developer, manager navigation patterns) to the sample\n"
      "service at a rate following the shape, for at most --duration seconds and --requests\n"
      "requests. Prints progress each second and a per-route summary at the end.",
      "agile-workload");
  perfhat::cli::configure(app, "0.1.0");
  agile::workload::RunConfig config;
  std::string shape_text = "seasonal";
  double rate = 20;
  long duration = 60;
  long requests = 0;
  long workers = 4;
  long seed = 7;
  double period = 30;
  std::string report_path;
  bool quiet = false;
  bool cpu_bound = false;
  std::string mix;
  app.add_option("--target", config.target, "URL of the sample service")->required();
  app.add_option("--shape", shape_text, "load shape: stationary, seasonal or bursts")
      ->capture_default_str();
  app.add_option("--rate", rate, "base request rate (req/s)")
      ->check(perfhat::cli::positiveNumber())
      ->capture_default_str();
  app.add_option("--duration", duration, "run for at most S seconds")
      ->check(perfhat::cli::positiveInteger())
      ->capture_default_str();
  app.add_option("--requests", requests, "stop after N requests (0 = unbounded)")
      ->check(perfhat::cli::nonNegativeNumber())
      ->capture_default_str();
  app.add_option("--workers", workers, "concurrent client workers")
      ->check(CLI::Range(1L, 256L))
      ->capture_default_str();
  app.add_option("--seed", seed, "random seed")->capture_default_str();
  app.add_option("--period", period, "period of the seasonal shape (s)")
      ->check(perfhat::cli::positiveNumber())
      ->capture_default_str();
  app.add_option("--report", report_path, "write the summary as JSON to FILE");
  app.add_flag("--quiet", quiet, "no progress lines");
  CLI::Option* mix_option =
      app.add_option("--mix", mix,
                     "session weights, e.g. planner:3,developer:5,manager:2[,analyst:N] "
                     "(default planner:3,developer:5,manager:2)");
  app.add_flag("--cpu-bound", cpu_bound,
               "only analyst sessions (burndown and velocity reports, computed in memory): the "
               "CPU-bound mix, same as --mix planner:0,developer:0,manager:0,analyst:1")
      ->excludes(mix_option);
  perfhat::cli::parse(app, argc, argv);
  const auto shape = agile::workload::parseShape(shape_text);
  if (!shape) perfhat::cli::usageError(app, "--shape: unknown shape '" + shape_text + "'");
  const bool mix_ok = parseMix(cpu_bound     ? "planner:0,developer:0,manager:0,analyst:1"
                               : mix.empty() ? "planner:3,developer:5,manager:2"
                                             : mix,
                               config.mix);
  if (!mix_ok) perfhat::cli::usageError(app, "--mix: expected NAME:WEIGHT,... got '" + mix + "'");
  config.progress = !quiet;
  config.load.shape = *shape;
  config.load.base_rate = rate;
  config.load.period_s = period;
  config.duration = std::chrono::seconds(duration);
  config.max_requests = uint64_t(requests);
  config.workers = int(workers);
  config.seed = uint32_t(seed);

  try {
    std::cerr << "[workload] " << toString(config.load.shape) << " load at " << rate
              << " req/s for at most " << duration << " s against " << config.target << "\n";
    const auto report =
        agile::workload::run(config, [](const std::string& line) { std::cerr << line << "\n"; });
    std::cerr << "[workload] done: " << report.ok << " ok, " << report.errors << " errors in "
              << report.elapsed_s << " s (" << report.throughput() << " req/s)\n";
    for (const auto& [route, stats] : report.routes) {
      char line[200];
      std::snprintf(line, sizeof line, "[workload]   %-32s %6llu req  p50 %8.2f ms  p99 %8.2f ms",
                    route.c_str(), static_cast<unsigned long long>(stats.count),
                    stats.percentile(0.5), stats.percentile(0.99));
      std::cerr << line << "\n";
    }
    if (!report_path.empty()) {
      std::ofstream out(report_path);
      out << report.toJson() << "\n";
      if (!out) {
        std::cerr << "agile-workload: cannot write " << report_path << "\n";
        return 1;
      }
    }
    return report.ok > 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "agile-workload: " << e.what() << "\n";
    return 1;
  }
}
