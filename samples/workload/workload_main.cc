// agile-workload: drives the sample service with a bounded, shaped load.
//
//   agile-workload --target http://127.0.0.1:PORT [--shape stationary|seasonal|bursts]
//                  [--rate 20] [--duration 60] [--requests N] [--workers 4] [--seed 7]
//                  [--mix planner:3,developer:5,manager:2[,analyst:N] | --cpu-bound]
//                  [--report FILE.json] [--quiet]
#include <fstream>
#include <iostream>
#include <sstream>

#include "samples/agile/cli.h"
#include "samples/workload/workload.h"

namespace {

constexpr const char* kUsage =
    "usage: agile-workload --target URL [--shape stationary|seasonal|bursts] [--rate R]\n"
    "                      [--duration S] [--requests N] [--workers W] [--seed N]\n"
    "                      [--mix planner:3,developer:5,manager:2[,analyst:N] | --cpu-bound]\n"
    "                      [--period S] [--report FILE.json] [--quiet]\n"
    "  Sends user sessions (planner, developer, manager navigation patterns) to the sample\n"
    "  service at a rate following the shape, for at most S seconds (default 60) and N requests\n"
    "  (default unbounded). Prints progress each second and a per-route summary at the end.\n"
    "  --cpu-bound  only analyst sessions (burndown and velocity reports, computed in memory):\n"
    "               the CPU-bound mix, same as --mix planner:0,developer:0,manager:0,analyst:1\n";

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
  agile::cli::Args args(argc, argv);
  if (args.flag("--help")) {
    std::cout << kUsage;
    return 0;
  }
  if (args.flag("--version")) {
    std::cout << "agile-workload 0.1.0\n";
    return 0;
  }
  agile::workload::RunConfig config;
  config.target = args.value("--target", "");
  const auto shape = agile::workload::parseShape(args.value("--shape", "seasonal"));
  const auto rate = agile::cli::parseDouble(args.value("--rate", "20"));
  const auto duration = agile::cli::parseInt(args.value("--duration", "60"));
  const auto requests = agile::cli::parseInt(args.value("--requests", "0"));
  const auto workers = agile::cli::parseInt(args.value("--workers", "4"));
  const auto seed = agile::cli::parseInt(args.value("--seed", "7"));
  const auto period = agile::cli::parseDouble(args.value("--period", "30"));
  const std::string report_path = args.value("--report", "");
  config.progress = !args.flag("--quiet");
  const bool cpu_bound = args.flag("--cpu-bound");
  const std::string mix = args.value("--mix", "");
  if (cpu_bound && !mix.empty()) std::cerr << "agile-workload: give either --mix or --cpu-bound\n";
  const bool mix_ok =
      cpu_bound ? mix.empty() && parseMix("planner:0,developer:0,manager:0,analyst:1", config.mix)
                : parseMix(mix.empty() ? "planner:3,developer:5,manager:2" : mix, config.mix);
  if (config.target.empty() || !shape || !rate || *rate <= 0 || !duration || *duration <= 0 ||
      !requests || *requests < 0 || !workers || *workers < 1 || *workers > 256 || !seed ||
      !period || *period <= 0 || !mix_ok || !args.unknown().empty()) {
    for (const auto& a : args.unknown())
      std::cerr << "agile-workload: unknown argument " << a << "\n";
    std::cerr << kUsage;
    return 2;
  }
  config.load.shape = *shape;
  config.load.base_rate = *rate;
  config.load.period_s = *period;
  config.duration = std::chrono::seconds(*duration);
  config.max_requests = uint64_t(*requests);
  config.workers = int(*workers);
  config.seed = uint32_t(*seed);

  try {
    std::cerr << "[workload] " << toString(config.load.shape) << " load at " << *rate
              << " req/s for at most " << *duration << " s against " << config.target << "\n";
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
