// Compiled twice (see representativeness_app.h): REPSTUDY_APP_NS names the namespace, and the
// plain flavour defines PERFHAT_DISABLE so every probe macro expands to nothing.
#include <cmath>
#include <cstddef>
#include <vector>

#include "perfhat/perfhat.hpp"
#include "representativeness_app.h"

#ifndef REPSTUDY_APP_NS
#error "REPSTUDY_APP_NS must name the flavour (instrumented or plain)"
#endif

namespace repstudy {
namespace REPSTUDY_APP_NS {
namespace {

// Passes over each buffer after filling it: sets the application's CPU per allocated byte. With
// 2 passes one request costs ~20 us of CPU on the study machine and full monitoring (a span per
// call, ~10 calls per request, exported) costs about a third of that, the share the thesis
// reports for FUM (Table 5.3: -27.6 % to -34.5 % throughput).
constexpr int kPasses = 12;

// Lognormal bytes with the given mean, rounded to whole 8-byte words, at least one word.
size_t draw_bytes(Rng& rng, double mean, double sigma) {
  double u1 = rng.uniform(), u2 = rng.uniform();
  double z = std::sqrt(-2.0 * std::log(u1 + 0x1.0p-60)) * std::cos(6.283185307179586 * u2);
  double x = std::exp(std::log(mean) - 0.5 * sigma * sigma + sigma * z);
  return std::max<size_t>(1, static_cast<size_t>(std::lround(x / 8.0))) * 8;
}

// The real work of every function: allocate `bytes`, fill, fold kPasses times.
uint64_t churn(Rng& rng, size_t bytes) {
  std::vector<uint64_t> buf(bytes / 8);
  uint64_t x = rng.next();
  for (auto& w : buf) {
    x += 0x9E3779B97F4A7C15ULL;  // splitmix64
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    w = z ^ (z >> 31);
  }
  uint64_t h = 0;
  for (int p = 0; p < kPasses; ++p) {
    for (uint64_t w : buf) h = (h ^ w) * 0x100000001B3ULL;
  }
  asm volatile("" : : "r"(buf.data()) : "memory");  // the buffer is observable: keep it
  return h;
}

[[gnu::noinline]] uint64_t parse_request(Rng& rng, double path_bytes) {
  PERFHAT_FUNCTION();
  size_t n = draw_bytes(rng, path_bytes, 0.3);
  PERFHAT_RESULT_SIZE(n);
  return churn(rng, n);
}

[[gnu::noinline]] uint64_t authenticate(Rng& rng, double session_bytes) {
  PERFHAT_FUNCTION();
  size_t n = draw_bytes(rng, session_bytes, 0.2);
  PERFHAT_RESULT_SIZE(n);
  return churn(rng, n);
}

[[gnu::noinline]] uint64_t cache_lookup(Rng& rng, double entry_bytes) {
  PERFHAT_FUNCTION();
  size_t n = draw_bytes(rng, entry_bytes, 0.8);
  PERFHAT_RESULT_SIZE(n);
  return churn(rng, n);
}

// Shared by most request types with type-dependent result sizes: its per-function mean depends
// on the request mix, which is what Algorithm 1's balancing is meant to preserve.
[[gnu::noinline]] uint64_t repo_find(Rng& rng, double rows_mean, double row_bytes, int* rows_out) {
  PERFHAT_FUNCTION();
  int rows = static_cast<int>(draw_bytes(rng, rows_mean * 8, 0.6) / 8);
  *rows_out = rows;
  size_t n = static_cast<size_t>(rows) * static_cast<size_t>(row_bytes);
  PERFHAT_RESULT_SIZE(n);
  return churn(rng, n);
}

[[gnu::noinline]] uint64_t render_row(Rng& rng, double row_bytes) {
  PERFHAT_FUNCTION();
  size_t n = draw_bytes(rng, row_bytes * 1.5, 0.4);
  PERFHAT_RESULT_SIZE(n);
  return churn(rng, n);
}

[[gnu::noinline]] uint64_t render_page(Rng& rng, double page_bytes) {
  PERFHAT_FUNCTION();
  size_t n = draw_bytes(rng, page_bytes, 0.5);
  PERFHAT_RESULT_SIZE(n);
  return churn(rng, n);
}

[[gnu::noinline]] uint64_t validate(Rng& rng, double form_bytes) {
  PERFHAT_FUNCTION();
  size_t n = draw_bytes(rng, form_bytes, 0.3);
  PERFHAT_RESULT_SIZE(n);
  return churn(rng, n);
}

[[gnu::noinline]] uint64_t repo_save(Rng& rng, double record_bytes) {
  PERFHAT_FUNCTION();
  size_t n = draw_bytes(rng, record_bytes, 0.5);
  PERFHAT_RESULT_SIZE(n);
  return churn(rng, n);
}

[[gnu::noinline]] uint64_t audit_log(Rng& rng, double line_bytes) {
  PERFHAT_FUNCTION();
  size_t n = draw_bytes(rng, line_bytes, 0.3);
  PERFHAT_RESULT_SIZE(n);
  return churn(rng, n);
}

uint64_t find_and_render(Rng& rng, double rows_mean, double row_bytes) {
  int rows = 0;
  uint64_t h = repo_find(rng, rows_mean, row_bytes, &rows);
  for (int i = 0; i < rows; ++i) h += render_row(rng, row_bytes);
  return h;
}

// One request root per type (a probe site needs a constant name).
template <int T>
[[gnu::noinline]] uint64_t handle(Rng& rng) {
  PERFHAT_REQUEST(kRequestNames[T]);
  uint64_t h = parse_request(rng, 96 + 32 * T) + authenticate(rng, 512);
  int rows = 0;
  if constexpr (T == 0) {  // GET /home
    h += cache_lookup(rng, 2048) + render_page(rng, 6144);
  } else if constexpr (T == 1) {  // GET /owners: a list page
    h += find_and_render(rng, 10, 320) + render_page(rng, 4096);
  } else if constexpr (T == 2) {  // GET /owners/{id}: owner and their pets
    h += repo_find(rng, 1, 512, &rows) + find_and_render(rng, 3, 256) + render_page(rng, 3072);
  } else if constexpr (T == 3) {  // GET /vets: cached list
    h += cache_lookup(rng, 4096) + find_and_render(rng, 6, 192) + render_page(rng, 2048);
  } else if constexpr (T == 4) {  // POST /visits
    h += validate(rng, 384) + repo_find(rng, 1, 512, &rows) + repo_save(rng, 1024) +
         audit_log(rng, 192) + render_page(rng, 1024);
  } else if constexpr (T == 5) {  // GET /pets/{id}: pet and visits
    h += repo_find(rng, 1, 384, &rows) + find_and_render(rng, 4, 256) + render_page(rng, 2560);
  } else if constexpr (T == 6) {  // POST /owners
    h += validate(rng, 512) + repo_save(rng, 2048) + audit_log(rng, 192) + render_page(rng, 1024);
  } else {  // GET /search: the rare, heavy request
    h += find_and_render(rng, 30, 448) + render_page(rng, 8192);
  }
  return h;
}

using Handler = uint64_t (*)(Rng&);
constexpr Handler kHandlers[kRequestTypes] = {handle<0>, handle<1>, handle<2>, handle<3>,
                                              handle<4>, handle<5>, handle<6>, handle<7>};
static_assert(kRequestTypes == 8, "one handler per request type");

}  // namespace

uint64_t serve(int type, Rng& rng) { return kHandlers[type](rng); }

}  // namespace REPSTUDY_APP_NS
}  // namespace repstudy
