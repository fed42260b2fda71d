// The stable surface of DESIGN §12 from a C++17 consumer: <perfhat/perfhat.hpp>, the probe
// macros, perfhat::init() without arguments (configuration from the environment) and
// perfhat::shutdown(). Built with CXX_STANDARD 17; the test runs it.
#include <perfhat/perfhat.hpp>

#include <cstdio>
#include <vector>

#if __cplusplus != 201703L
#error "this consumer must be compiled as C++17"
#endif

namespace {
[[gnu::noinline]] std::vector<int> items(int n) {
  PERFHAT_FUNCTION();
  std::vector<int> v(static_cast<size_t>(n), 1);
  PERFHAT_RESULT_SIZE(v.size());
  return v;
}
[[gnu::noinline]] int serve(int n) {
  PERFHAT_REQUEST("GET /items");
  int sum = 0;
  for (int x : items(n)) sum += x;
  PERFHAT_LOOP_ITERATIONS(n);
  return sum;
}
}  // namespace

int main() {
  if (!perfhat::init()) {
    std::fprintf(stderr, "init failed: %s\n", perfhat::last_error().c_str());
    return 1;
  }
  int sum = 0;
  for (int i = 0; i < 10; ++i) sum += serve(i);
  perfhat::Counters c = perfhat::counters();
  perfhat::shutdown();
  std::printf("sum=%d recorded=%llu\n", sum, static_cast<unsigned long long>(c.spans_recorded));
  return sum == 45 && c.spans_recorded > 0 ? 0 : 1;
}
