// Fuzz target for libperfhat's outside-input parsers: the TigrisDSL filter (PERFHAT_FILTER), the
// scope patterns (PERFHAT_SCOPE) and the static-metrics CSV (PERFHAT_STATIC_METRICS).
// Invariants: no crash; a parsed filter prints to a form that parses to the same print; the
// classification of a fixed event set never fails for bound criteria.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tigris.h"
#include "tigris_dsl.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace perfhat::tigris;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = parse(text);
  if (r) {
    std::string printed = print(*r.root);
    auto again = parse(printed);
    if (!again || print(*again.root) != printed) std::abort();
    std::vector<EventMetrics> events(7);
    for (size_t i = 0; i < events.size(); ++i) {
      events[i].name = "f" + std::to_string(i);
      events[i].metrics[std::string(metric::kInvocationFrequency)] = double(i * i);
      events[i].metrics[std::string(metric::kExecutionTime)] = double(100 - i);
    }
    Bindings b = Bindings::defaults();
    b.set(Criterion::kMaintainable, {"loc", true});
    b.set(Criterion::kStateVariation, {"writes", true});
    auto c = classify(*r.root, events, b);
    if (!c.error.empty() || c.relevant.size() != events.size()) std::abort();
  } else if (!r.error || r.error->column == 0 || r.error->offset > size) {
    std::abort();
  }
  auto scope = Scope::parse(text);
  (void)scope.admits("agile::BacklogService::storyPoints(const agile::Story &) const");
  (void)glob_match(text, "agile::BacklogService::load");
  auto sm = parse_static_metrics_csv(text);
  (void)sm;
  return 0;
}
