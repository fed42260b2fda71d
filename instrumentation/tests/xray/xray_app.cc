// Built by xray_test.sh with clang++ -fxray-instrument and linked with perfhat::xray: no probe
// macro, every function gets an XRay sled; prints what libperfhat recorded.
#include <cstdio>
#include <map>
#include <string>

#include "perfhat/memory_exporter.hpp"
#include "perfhat/perfhat.hpp"

namespace perfhat::autoinstrument {
size_t xray_unpatched();
size_t xray_functions();
}  // namespace perfhat::autoinstrument

namespace xapp {
__attribute__((noinline)) int leaf(int x) { return x * 3; }
__attribute__((noinline)) int middle(int x) { return leaf(x) + leaf(x + 1); }
__attribute__((noinline)) int skipped(int x) { return x - 1; }
}  // namespace xapp

int main() {
  auto ex = std::make_shared<perfhat::MemoryExporter>();
  perfhat::Config c = perfhat::Config::from_env();
  c.endpoint.clear();
  perfhat::init(c, ex);
  int total = 0;
  for (int i = 0; i < 100; ++i) total += xapp::middle(i) + xapp::skipped(i);
  perfhat::flush();
  std::map<std::string, int> spans;
  uint64_t middle_id = 0, last_leaf_parent = 0;
  for (const auto& s : ex->spans()) {
    ++spans[s.function];
    if (s.function == "xapp::middle(int)") middle_id = s.span_id;
    if (s.function == "xapp::leaf(int)") last_leaf_parent = s.parent_span_id;
  }
  std::printf("total=%d leaf=%d middle=%d skipped=%d nested=%d functions=%zu unpatched=%zu\n",
              total, spans["xapp::leaf(int)"], spans["xapp::middle(int)"],
              spans["xapp::skipped(int)"], middle_id != 0 && last_leaf_parent == middle_id,
              perfhat::autoinstrument::xray_functions(), perfhat::autoinstrument::xray_unpatched());
  perfhat::shutdown();
}
