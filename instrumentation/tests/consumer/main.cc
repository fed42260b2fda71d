// A user of the installed package: probes, the in-memory exporter, and the OTLP exporter linked.
#include <perfhat/memory_exporter.hpp>
#include <perfhat/otlp_exporter.hpp>
#include <perfhat/perfhat.hpp>

#include <cstdio>

[[gnu::noinline]] int twice(int x) {
  PERFHAT_FUNCTION();
  return 2 * x;
}

int main() {
  perfhat::Config c;
  c.sampler = "full";
  auto ex = std::make_shared<perfhat::MemoryExporter>();
  if (!perfhat::init(c, ex)) return 1;
  int s = 0;
  for (int i = 0; i < 3; ++i) s += twice(i);
  perfhat::shutdown();
  std::printf("spans=%zu sum=%d\n", ex->spans().size(), s);
  return ex->spans().size() == 3 ? 0 : 1;
}
