// A user of the installed package (C++17): every probe macro, perfhat::init and
// perfhat::shutdown, the in-memory exporter, and the OTLP exporter linked in. Prints what was
// recorded; install_consumer.sh checks it.
#include <perfhat/memory_exporter.hpp>
#include <perfhat/otlp_exporter.hpp>
#include <perfhat/perfhat.hpp>

#include <cstdio>
#include <string>
#include <vector>

// What this test is about: the package must not raise the consumer's language standard.
static_assert(__cplusplus == 201703L, "the consumer must compile as C++17");

namespace shop {

[[gnu::noinline]] int twice(int x) {
  PERFHAT_FUNCTION();
  return 2 * x;
}

[[gnu::noinline]] std::vector<int> evens(int n) {
  PERFHAT_FUNCTION();
  std::vector<int> out;
  for (int i = 0; i < n; ++i) out.push_back(twice(i));
  PERFHAT_LOOP_ITERATIONS(n);
  PERFHAT_RESULT_SIZE(out.size());
  PERFHAT_ATTRIBUTE("shop.n", n);
  if (n == 0) PERFHAT_ERROR();
  return out;
}

[[gnu::noinline]] int serve(int n) {
  PERFHAT_REQUEST("GET /evens");
  int sum = 0;
  {
    PERFHAT_SCOPE("sum");
    for (int v : evens(n)) sum += v;
  }
  return sum;
}

}  // namespace shop

int main() {
  perfhat::Config config;
  config.sampler = "full";  // every call recorded: the span count below is exact
  auto exporter = std::make_shared<perfhat::MemoryExporter>();
  // init(config) alone would pick the OTLP exporter from the environment; the in-memory one
  // lets this program count its own spans.
  if (!perfhat::init(config, exporter)) {
    std::fprintf(stderr, "init failed: %s\n", perfhat::last_error().c_str());
    return 1;
  }
  int sum = shop::serve(3);
  perfhat::shutdown();
  size_t twice = 0, evens = 0, requests = 0, scopes = 0, evens_size = 0;
  for (const perfhat::SpanData& s : exporter->spans()) {
    if (s.function.find("shop::twice") != std::string::npos) ++twice;
    if (s.name == "GET /evens") ++requests;
    if (s.name == "sum") ++scopes;
    if (s.function.find("shop::evens") != std::string::npos) {
      ++evens;
      evens_size = static_cast<size_t>(s.result_size);
    }
  }
  std::printf("spans=%zu twice=%zu evens=%zu evens_size=%zu requests=%zu scopes=%zu sum=%d\n",
              exporter->spans().size(), twice, evens, evens_size, requests, scopes, sum);
  return 0;
}
