// The service the representativeness study drives: a pet-clinic-like request handler whose work
// is real CPU (filling and folding heap buffers), so its cost per request is measured in CPU
// time and is not distorted by a loaded machine the way a wall-clock busy-wait is.
//
// representativeness_app.cc is compiled twice: once with the perfhat probes (namespace
// `instrumented`) and once with -DPERFHAT_DISABLE (namespace `plain`), the thesis' NOM, i.e.
// the application without any instrumentation.
#pragma once

#include <cstdint>

namespace repstudy {

// Request types and the navigation mix (share of requests), thesis h2 has 8 types too.
inline constexpr int kRequestTypes = 8;
inline constexpr const char* kRequestNames[kRequestTypes] = {
    "GET /home",    "GET /owners",    "GET /owners/{id}", "GET /vets",
    "POST /visits", "GET /pets/{id}", "POST /owners",     "GET /search"};
inline constexpr double kRequestMix[kRequestTypes] = {0.30, 0.18, 0.15, 0.12,
                                                      0.10, 0.08, 0.05, 0.02};

// xorshift64*: per-worker, cheap, deterministic for a given seed.
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed | 1) {}
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1DULL;
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  int request_type() {  // drawn from kRequestMix
    double u = uniform();
    for (int t = 0; t < kRequestTypes - 1; ++t) {
      if ((u -= kRequestMix[t]) < 0) return t;
    }
    return kRequestTypes - 1;
  }
};

// Serves one request of `type` (0..kRequestTypes-1). Returns a checksum so the work cannot be
// optimised away. Every instrumented function reports the bytes it allocated with
// PERFHAT_RESULT_SIZE: the study's stand-in for the thesis' per-method memory consumption, a
// quantity none of the samplers looks at.
namespace instrumented {
uint64_t serve(int type, Rng& rng);
}
namespace plain {
uint64_t serve(int type, Rng& rng);
}

}  // namespace repstudy
