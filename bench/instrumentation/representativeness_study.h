// Core of the representativeness study (thesis Table 5.3): one run drives the service of
// representativeness_app.h with closed-loop users through a stationary, a seasonal and a burst
// segment, monitored by one configuration through the real libperfhat engine, and measures
//  * cost: wall throughput, process CPU and worker-thread CPU per request (robust on a loaded
//    machine, unlike wall time), and
//  * representativeness: per segment, the RMSE over functions between the per-function mean
//    estimated from the exported spans and the mean over every call (the engine's phase-1
//    aggregates, which count sampled and unsampled calls alike), for the allocated bytes (the
//    thesis' memory metric) and for latency.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "perfhat/perfhat.hpp"

namespace repstudy {

enum Segment : int { kStationary = 0, kSeasonal = 1, kBurst = 2, kSegments = 3 };
const char* segment_name(int segment);  // "stationary", "seasonal", "burst", "whole run"

struct Options {
  double segment_s = 5;   // length of each of the three segments
  int typical_users = 2;  // stationary level (thesis h2: 8 typical ...)
  int peak_users = 6;     // ... 20 at peaks)
  // A user loads a page of `page_requests` requests back to back, then thinks for an
  // exponentially distributed time: the typical load leaves the CPU partly idle and the peaks
  // saturate it, so throughput follows the users as in the thesis' workload (without think time
  // two users already saturate two cores and every segment looks alike).
  int page_requests = 25;
  double think_ms = 1.0;
  double sampling_rate = 0.5;  // desired rate of ADP and INV, fixed rate of UNI (thesis: 50 %)
};

// Closed-loop users active at time t (s) into a segment of length len.
int users(int segment, double t, double len, const Options& o);

// NOM: the application compiled without probes. none: probes with phase 1 only (sampler
// "none"). FUM/ADP/UNI/INV: samplers full/adaptive/uniform/inverse. UNI≈ADP: uniform at the
// share ADP actually sampled (Options::sampling_rate set by the caller), an equal-cost control.
enum class Mode { kNom, kNone, kFull, kAdaptive, kUniform, kInverse, kUniformMatched };
inline constexpr Mode kAllModes[] = {Mode::kNom,      Mode::kNone,    Mode::kFull,
                                     Mode::kAdaptive, Mode::kUniform, Mode::kInverse};
const char* mode_name(Mode m);     // thesis labels: NOM none FUM ADP UNI INV, and UNI≈ADP
const char* sampler_name(Mode m);  // PERFHAT_SAMPLER value; nullptr for NOM

struct SegmentResult {
  uint64_t requests = 0;          // served (every request, from the load generator)
  uint64_t sampled_requests = 0;  // request roots among the exported spans
  uint64_t spans = 0;             // exported function spans (request roots excluded)
  double wall_s = 0;
  double rmse_bytes = -1;  // -1 = not applicable (NOM, none)
  double rmse_latency_ns = -1;
  double mean_latency_ns = 0;    // mean over functions of the ground-truth latency
  size_t functions = 0;          // functions called (ground truth)
  size_t functions_sampled = 0;  // functions with at least one span
  // Time average of the sampler's rate (perfhat::sampling_rate(), read every 5 ms): the
  // thesis' SR. It differs from the sampled share: Algorithm 1's balance check turns some
  // Bernoulli successes away, and nothing is sampled during ADP's performance baselines.
  double mean_rate = 0;
};

struct RunResult {
  Mode mode = Mode::kNom;
  std::array<SegmentResult, kSegments + 1> seg;  // index kSegments = whole run
  double wall_s = 0, process_cpu_s = 0, worker_cpu_s = 0;
  double load_avg = 0;  // 1-minute load average at the end of the run
  perfhat::Counters counters;
  uint64_t checksum = 0;
  const SegmentResult& whole() const { return seg[kSegments]; }
  double sampled_share() const;
};

// Runs one configuration; `seed` fixes the users' request sequences (same seed, same requests).
// Throws std::runtime_error if the engine refuses the configuration.
RunResult run_once(Mode mode, const Options& o, uint64_t seed);

}  // namespace repstudy
