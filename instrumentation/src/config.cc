// Configuration from the environment (Config::from_env), and the public API of perfhat.hpp,
// each call a thin wrapper over the Engine.
#include "engine_internal.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace perfhat {
namespace detail {

double parse_double_env(const char* name, double def) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return def;
  char* end = nullptr;
  double d = std::strtod(v, &end);
  if (end == v || *end != '\0' || !std::isfinite(d)) {
    std::fprintf(stderr, "perfhat: ignoring %s=%s (not a number)\n", name, v);
    return def;
  }
  return d;
}

std::string env_or(const char* name, const std::string& def) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : def;
}

namespace {

// A whole-number setting in [lo, hi]; anything else is reported with what was `expected` and the
// default kept.
template <typename T>
T integer_env(const char* name, T def, double lo, double hi, const char* expected) {
  const double v = parse_double_env(name, static_cast<double>(def));
  if (v >= lo && v <= hi && v == std::floor(v)) return static_cast<T>(v);
  std::fprintf(stderr, "perfhat: ignoring %s (%s)\n", name, expected);
  return def;
}

// Config::selection_dir: PERFHAT_SELECTION_DIR, "off" for none, else the user's cache directory
// ("" without HOME: nowhere to keep it).
std::string selection_dir_from_env() {
  const char* v = std::getenv("PERFHAT_SELECTION_DIR");
  if (v != nullptr) return std::strcmp(v, "off") == 0 || std::strcmp(v, "0") == 0 ? "" : v;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/')
    return std::string(xdg) + "/perfhat/selections";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/')
    return std::string(home) + "/.cache/perfhat/selections";
  return "";
}

}  // namespace

}  // namespace detail

// ---- Public API -----------------------------------------------------------------------------

Config Config::from_env() {
  Config c;
  using detail::env_or;
  using detail::parse_double_env;
  const char* en = std::getenv("PERFHAT_ENABLED");
  if (en && (std::strcmp(en, "0") == 0 || std::strcmp(en, "false") == 0)) c.enabled = false;
  c.service_name = env_or("OTEL_SERVICE_NAME", c.service_name);
  c.service_version = env_or("PERFHAT_SERVICE_VERSION", env_or("OTEL_SERVICE_VERSION", ""));
  c.endpoint = env_or("PERFHAT_ENDPOINT", env_or("OTEL_EXPORTER_OTLP_ENDPOINT", ""));
  c.headers = env_or("OTEL_EXPORTER_OTLP_HEADERS", "");
  c.token = env_or("PERFHAT_TOKEN", "");
  c.protocol = env_or("OTEL_EXPORTER_OTLP_PROTOCOL", c.protocol);
  c.compression = env_or("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
                         env_or("OTEL_EXPORTER_OTLP_COMPRESSION", c.compression));
  c.filter = env_or("PERFHAT_FILTER", "");
  const char* comp = std::getenv("PERFHAT_COMPENSATE");
  if (comp && (std::strcmp(comp, "0") == 0 || std::strcmp(comp, "false") == 0)) {
    c.compensate_overhead = false;
  }
  const char* om = std::getenv("PERFHAT_OTLP_METRICS");
  c.otlp_metrics = om && (std::strcmp(om, "1") == 0 || std::strcmp(om, "true") == 0);
  c.scope = env_or("PERFHAT_SCOPE", "");
  c.static_metrics_file = env_or("PERFHAT_STATIC_METRICS", "");
  c.sampler = env_or("PERFHAT_SAMPLER", c.sampler);
  c.export_mode = env_or("PERFHAT_EXPORT", c.export_mode);
  c.sampling_rate =
      std::clamp(parse_double_env("PERFHAT_SAMPLING_RATE", c.sampling_rate), 0.0, 1.0);
  c.cycle_s = parse_double_env("PERFHAT_CYCLE_S", c.cycle_s);
  if (c.cycle_s <= 0) c.cycle_s = 120;
  c.export_interval_s = parse_double_env("PERFHAT_EXPORT_INTERVAL_S", c.export_interval_s);
  c.timing_period = detail::integer_env("PERFHAT_TIMING_PERIOD", c.timing_period, 1, 1e6,
                                        "an integer in [1, 1e6]");
  c.phase1_window_calls = detail::integer_env("PERFHAT_PHASE1_WINDOW_CALLS", c.phase1_window_calls,
                                              0, 1e15, "an integer >= 0");
  c.phase1_window_ms = detail::integer_env("PERFHAT_PHASE1_WINDOW_MS", c.phase1_window_ms, 0, 1e9,
                                           "an integer >= 0");
  c.phase1_function_calls = detail::integer_env("PERFHAT_PHASE1_FUNCTION_CALLS",
                                                c.phase1_function_calls, 0, 1e9, "an integer >= 0");
  const double duty = parse_double_env("PERFHAT_PHASE1_DUTY", c.phase1_duty);
  if (duty > 0 && duty <= 1) {
    c.phase1_duty = duty;
  } else {
    std::fprintf(stderr, "perfhat: ignoring PERFHAT_PHASE1_DUTY (a fraction in (0, 1])\n");
  }
  c.selection_dir = detail::selection_dir_from_env();
  // Export path sizes (issue #5): spans per POST and per-thread ring capacity.
  c.batch_size = detail::integer_env("PERFHAT_EXPORT_BATCH", c.batch_size, 1, 1u << 16,
                                     "an integer in [1, 65536]");
  c.span_ring_per_thread = detail::integer_env("PERFHAT_SPAN_RING", c.span_ring_per_thread, 1,
                                               1u << 20, "an integer in [1, 1048576]");
  detail::read_variant_env(c);
  return c;
}

bool init() { return init(Config::from_env()); }
bool init(const Config& config) { return init(config, nullptr); }
bool init(const Config& config, std::shared_ptr<Exporter> exporter) {
  detail::EngineScope in_engine;
  const bool ok = detail::Engine::get().init(config, std::move(exporter));
  detail::Engine::get().finish_activation();
  return ok;
}
void shutdown() {
  detail::EngineScope in_engine;
  detail::Engine::get().shutdown();
}
void flush() {
  detail::EngineScope in_engine;
  detail::Engine::get().flush();
}
std::string last_error() { return detail::Engine::get().last_error(); }
void set_sampling_rate(double r) { detail::Engine::get().set_sampling_rate(r); }
double sampling_rate() { return detail::Engine::get().sampling_rate(); }
void set_analysis_cycle(double s) { detail::Engine::get().set_cycle(s); }
void set_enabled(bool on) {
  if (detail::g_mode.load() == detail::kUninitialized) detail::ensure_initialized();
  detail::Engine::get().set_mode(on ? detail::kEnabled : detail::kDisabled);
  detail::EngineScope in_engine;
  detail::Engine::get().finish_activation();
}
bool set_filter(const std::string& f) { return detail::Engine::get().set_filter(f); }
void analyze_now() {
  detail::EngineScope in_engine;
  detail::Engine::get().analyze_now();
}
Counters counters() {
  detail::EngineScope in_engine;
  return detail::Engine::get().counters();
}

void set_session(const char* session_id) {
  detail::Hot* h = detail::t_hot;
  if (h == nullptr) return;
  uint64_t x = 1469598103934665603ull;  // FNV-1a
  for (const char* p = session_id; p && *p; ++p)
    x = (x ^ static_cast<uint8_t>(*p)) * 1099511628211ull;
  h->session_hash = session_id ? (x == 0 ? 1 : x) : 0;
}

}  // namespace perfhat
