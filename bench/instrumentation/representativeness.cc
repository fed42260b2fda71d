// Representativeness study in the style of thesis Table 5.3 (see representativeness_study.h and
// bench/README.md, "Representativeness study"). Every repetition runs all six configurations
// (NOM none FUM ADP UNI INV) on the same request sequences, in an order rotated by one per
// repetition so that a drift of the machine's load does not always hit the same configuration;
// tables give the median and [min-max] over repetitions, and paired per-repetition comparisons.
//
// Usage: instr_representativeness [--reps N=3] [--segment-seconds S=5] [--quick]
//   --quick: 1 repetition of 0.5 s segments (a check that it runs, not a measurement).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "common/cli.h"
#include "representativeness_study.h"
#include "stats.h"

namespace {

using repstudy::kSegments;
using repstudy::Mode;
using repstudy::RunResult;

constexpr int kModes = static_cast<int>(std::size(repstudy::kAllModes));
// Result rows: the six configurations, then UNI≈ADP (run right after ADP in each repetition).
constexpr int kRows = kModes + 1;
constexpr int kAdp = 3, kUni = 4, kInv = 5, kUniMatched = 6;
Mode row_mode(int row) { return row < kModes ? repstudy::kAllModes[row] : Mode::kUniformMatched; }

// "median [min-max]" of f over the repetitions of one mode.
std::string spread(const std::vector<RunResult>& runs,
                   const std::function<double(const RunResult&)>& f, const char* fmt) {
  std::vector<double> xs;
  xs.reserve(runs.size());
  for (const auto& r : runs) xs.push_back(f(r));
  if (xs.empty()) return "—";
  auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
  char med[32], a[32], b[32];
  std::snprintf(med, sizeof med, fmt, perfhat::stats::median(xs));
  if (xs.size() == 1) return med;
  std::snprintf(a, sizeof a, fmt, *lo);
  std::snprintf(b, sizeof b, fmt, *hi);
  return std::string(med) + " [" + a + "–" + b + "]";
}

bool samples(Mode m) { return m != Mode::kNom && m != Mode::kNone; }

}  // namespace

int main(int argc, char** argv) {
  repstudy::Options o;
  int reps = 3;
  bool quick = false;
  CLI::App app(
      "Representativeness study: how closely each sampling configuration's recorded calls\n"
      "follow the real workload (stationary, seasonal and burst segments).",
      "instr_representativeness");
  perfhat::cli::configure(app, "0.1.0");
  app.add_option("--reps", reps, "repetitions of every configuration")
      ->check(perfhat::cli::positiveInteger())
      ->capture_default_str();
  app.add_option("--segment-seconds", o.segment_s, "length of each load segment (s)")
      ->check(perfhat::cli::positiveNumber())
      ->capture_default_str();
  app.add_flag("--quick", quick, "one repetition of 0.5 s segments (overrides the two above)");
  perfhat::cli::parse(app, argc, argv);
  if (quick) {
    reps = 1;
    o.segment_s = 0.5;
  }
  std::printf(
      "Representativeness study: %d repetition(s) x %d configurations x 3 segments of %.1f s "
      "(stationary %d users; seasonal %d-%d; burst %d with peaks of %d; pages of %d requests, "
      "think time %.1f ms), desired rate %.0f %%\n",
      reps, kRows, o.segment_s, o.typical_users, o.typical_users, o.peak_users, o.typical_users,
      o.peak_users, o.page_requests, o.think_ms, 100 * o.sampling_rate);

  // runs[mode][rep]
  std::vector<std::vector<RunResult>> runs(kRows);
  auto t0 = std::chrono::steady_clock::now();
  for (int rep = 0; rep < reps; ++rep) {
    std::vector<int> order;
    for (int k = 0; k < kModes; ++k) {
      order.push_back((k + rep) % kModes);
      if (order.back() == kAdp) order.push_back(kUniMatched);
    }
    for (int m : order) {
      Mode mode = row_mode(m);
      repstudy::Options om = o;
      if (mode == Mode::kUniformMatched) om.sampling_rate = runs[kAdp].back().sampled_share();
      RunResult r = repstudy::run_once(mode, om, static_cast<uint64_t>(rep) + 1);
      double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const uint64_t drops = r.counters.spans_dropped_ring + r.counters.spans_dropped_queue +
                             r.counters.spans_dropped_export;
      std::fprintf(
          stderr,
          "[%6.1f s] rep %d/%d %-4s %8llu requests, %5.1f %% sampled (rate %5.1f %%), %.2f us "
          "CPU/request, load %.1f, drops %llu\n",
          el, rep + 1, reps, repstudy::mode_name(mode),
          static_cast<unsigned long long>(r.whole().requests), 100 * r.sampled_share(),
          100 * r.whole().mean_rate,
          1e6 * r.process_cpu_s / static_cast<double>(std::max<uint64_t>(1, r.whole().requests)),
          r.load_avg, static_cast<unsigned long long>(drops));
      runs[m].push_back(r);
    }
  }

  auto per_req = [](double cpu_s, const RunResult& r) {
    return 1e6 * cpu_s / static_cast<double>(std::max<uint64_t>(1, r.whole().requests));
  };
  // Paired with NOM of the same repetition (same request sequences, adjacent in time).
  auto vs_nom = [&](int m, const std::function<double(const RunResult&)>& f) {
    std::vector<double> rel;
    rel.reserve(reps);
    for (int rep = 0; rep < reps; ++rep)
      rel.push_back(100 * (f(runs[m][rep]) / f(runs[0][rep]) - 1));
    auto [lo, hi] = std::minmax_element(rel.begin(), rel.end());
    char buf[64];
    if (reps == 1) {
      std::snprintf(buf, sizeof buf, "%+.1f %%", rel[0]);
    } else {
      std::snprintf(buf, sizeof buf, "%+.1f %% [%+.1f–%+.1f]", perfhat::stats::median(rel), *lo,
                    *hi);
    }
    return std::string(buf);
  };
  auto cpu_tput = [&](const RunResult& r) {
    return static_cast<double>(r.whole().requests) / r.process_cpu_s;
  };

  std::printf(
      "\nCost (median [min–max] over repetitions; Δ paired with NOM of the same repetition)\n\n");
  std::printf(
      "| config | wall req/s | process CPU µs/req | CPU-bound req/CPU-s | Δ vs NOM | worker CPU "
      "µs/req | Δ vs NOM | sampled | mean rate (SR) |\n|---|---|---|---|---|---|---|---|---|\n");
  for (int m = 0; m < kRows; ++m) {
    const auto& rs = runs[m];
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                repstudy::mode_name(row_mode(m)),
                spread(
                    rs, [](const RunResult& r) { return r.whole().requests / r.wall_s; }, "%.0f")
                    .c_str(),
                spread(
                    rs, [&](const RunResult& r) { return per_req(r.process_cpu_s, r); }, "%.2f")
                    .c_str(),
                spread(rs, cpu_tput, "%.0f").c_str(), m == 0 ? "—" : vs_nom(m, cpu_tput).c_str(),
                spread(
                    rs, [&](const RunResult& r) { return per_req(r.worker_cpu_s, r); }, "%.2f")
                    .c_str(),
                m == 0 ? "—"
                       : vs_nom(m,
                                [&](const RunResult& r) {
                                  return static_cast<double>(r.whole().requests) / r.worker_cpu_s;
                                })
                             .c_str(),
                spread(
                    rs, [](const RunResult& r) { return 100 * r.sampled_share(); }, "%.1f %%")
                    .c_str(),
                spread(
                    rs, [](const RunResult& r) { return 100 * r.whole().mean_rate; }, "%.1f %%")
                    .c_str());
  }

  for (int metric = 0; metric < 2; ++metric) {
    std::printf("\n%s per segment and whole run (median [min–max]); sampled share per segment\n\n",
                metric == 0 ? "RMSE of the per-function mean allocated bytes (B)"
                            : "RMSE of the per-function mean latency (µs)");
    std::printf(
        "| config | stationary | seasonal | burst | whole run | sampled st / se / bu | rate st / "
        "se / bu |\n"
        "|---|---|---|---|---|---|---|\n");
    for (int m = 0; m < kRows; ++m) {
      if (!samples(row_mode(m))) continue;
      std::string cells;
      for (int s = 0; s <= kSegments; ++s) {
        cells += " " +
                 spread(
                     runs[m],
                     [&](const RunResult& r) {
                       return metric == 0 ? r.seg[s].rmse_bytes : r.seg[s].rmse_latency_ns / 1e3;
                     },
                     metric == 0 ? "%.1f" : "%.3f") +
                 " |";
      }
      std::string share;
      for (int s = 0; s < kSegments; ++s) {
        share += spread(
                     runs[m],
                     [&](const RunResult& r) {
                       return 100.0 * static_cast<double>(r.seg[s].sampled_requests) /
                              static_cast<double>(std::max<uint64_t>(1, r.seg[s].requests));
                     },
                     "%.0f") +
                 (s + 1 < kSegments ? " / " : " %");
      }
      std::string rate;
      for (int s = 0; s < kSegments; ++s) {
        rate +=
            spread(
                runs[m], [&](const RunResult& r) { return 100.0 * r.seg[s].mean_rate; }, "%.0f") +
            (s + 1 < kSegments ? " / " : " %");
      }
      std::printf("| %s |%s %s | %s |\n", repstudy::mode_name(row_mode(m)), cells.c_str(),
                  share.c_str(), rate.c_str());
    }
  }

  // Paired per-repetition orderings: how often the thesis' ordering holds.
  auto count = [&](int a, int b, const std::function<double(const RunResult&)>& f) {
    int n = 0;
    for (int rep = 0; rep < reps; ++rep) n += f(runs[a][rep]) < f(runs[b][rep]);
    return n;
  };
  auto rmse_b = [](const RunResult& r) { return r.whole().rmse_bytes; };
  auto rmse_l = [](const RunResult& r) { return r.whole().rmse_latency_ns; };
  auto cpu = [&](const RunResult& r) { return per_req(r.process_cpu_s, r); };
  std::printf("\nPaired orderings (repetitions out of %d in which the first is lower)\n\n", reps);
  std::printf(
      "| ordering (thesis: holds on all 5 apps) | RMSE bytes | RMSE latency | CPU/request |\n"
      "|---|---|---|---|\n");
  std::printf("| ADP < UNI | %d | %d | %d |\n", count(kAdp, kUni, rmse_b),
              count(kAdp, kUni, rmse_l), count(kAdp, kUni, cpu));
  std::printf("| ADP < INV | %d | %d | %d (thesis: INV cheaper) |\n", count(kAdp, kInv, rmse_b),
              count(kAdp, kInv, rmse_l), count(kAdp, kInv, cpu));
  std::printf("| INV < UNI | %d | %d | %d |\n", count(kInv, kUni, rmse_b),
              count(kInv, kUni, rmse_l), count(kInv, kUni, cpu));
  std::printf("| ADP < UNI≈ADP (equal rate) | %d | %d | %d |\n", count(kAdp, kUniMatched, rmse_b),
              count(kAdp, kUniMatched, rmse_l), count(kAdp, kUniMatched, cpu));

  double load_lo = 1e9, load_hi = 0;
  uint64_t drops = 0;
  for (const auto& rs : runs) {
    for (const auto& r : rs) {
      load_lo = std::min(load_lo, r.load_avg);
      load_hi = std::max(load_hi, r.load_avg);
      drops += r.counters.spans_dropped_ring + r.counters.spans_dropped_queue +
               r.counters.spans_dropped_export;
    }
  }
  std::printf("\n1-min load average %.1f–%.1f during the runs, %llu spans dropped, %.0f s total\n",
              load_lo, load_hi, static_cast<unsigned long long>(drops),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return 0;
}
