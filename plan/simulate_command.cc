// perfhat-plan simulate: streams a full-trace corpus through a manifest's masks.
// Trace format: one call record a line, "SITE<TAB>FUNCTION KEY" (SITE: the replica number of the
// manifest's assignment); blank lines and lines starting with '#' are skipped. The file is read
// in blocks, so its size is not bounded by memory; a single line is.
#include <charconv>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>

#include "plan/bounded_file.h"
#include "plan/commands.h"
#include "plan/release_history.h"
#include "plan/simulate.h"
#include "plan/variants.h"

namespace perfhat::plan {
namespace {

constexpr std::size_t kMaxTraceLine = 16 << 10;

int fail(const std::string& message) {
  std::fprintf(stderr, "perfhat-plan simulate: %s\n", message.c_str());
  return 2;
}

// "" or the problem with line `n`.
std::string recordLine(Simulator& sim, std::string_view line, std::uint64_t n) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty() || line.front() == '#') return "";
  auto where = [&] { return "trace line " + std::to_string(n) + ": "; };
  if (line.find('\0') != std::string_view::npos)
    return where() + "NUL byte (the trace looks binary)";
  std::size_t tab = line.find('\t');
  if (tab == std::string_view::npos) return where() + "expected SITE<TAB>FUNCTION KEY";
  std::size_t site = 0;
  auto [end, ec] = std::from_chars(line.data(), line.data() + tab, site);
  if (ec != std::errc() || end != line.data() + tab)
    return where() + "the site must be a replica number";
  std::string_view key = line.substr(tab + 1);
  if (key.empty()) return where() + "empty function key";
  if (std::string e = sim.record(site, key); !e.empty()) return where() + e;
  return "";
}

}  // namespace

int runSimulate(const SimulateOptions& o) {
  if (!(o.top_percent > 0 && o.top_percent <= 100))
    return fail("--top-percent must be in (0, 100]");
  if (o.max_skip > 1'000'000) return fail("--max-skip must be at most 1000000");
  Result<std::string> text = readBoundedFile(o.manifest_path, kMaxManifestBytes);
  if (!text) return fail(text.error);
  ManifestMasks masks;
  if (std::string e = parseManifestMasks(text.value, masks); !e.empty()) return fail(e);
  text.value.clear();

  PlanRng rng(o.seed.value_or(std::random_device{}()));
  const std::uint64_t span = o.max_skip + 1;
  Simulator sim(masks, o.top_percent, [&rng, span] { return rng.below(span); });

  std::ifstream in(o.trace_path, std::ios::binary);
  if (!in) return fail("cannot open " + o.trace_path);
  std::string pending;
  std::uint64_t line_no = 0;
  char buffer[1 << 16];
  while (in) {
    in.read(buffer, sizeof buffer);
    pending.append(buffer, static_cast<std::size_t>(in.gcount()));
    std::size_t start = 0;
    for (std::size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      if (std::string e =
              recordLine(sim, std::string_view(pending).substr(start, nl - start), ++line_no);
          !e.empty())
        return fail(e);
    }
    pending.erase(0, start);
    if (pending.size() > kMaxTraceLine)
      return fail("trace line " + std::to_string(line_no + 1) + ": longer than " +
                  std::to_string(kMaxTraceLine) + " bytes");
  }
  if (in.bad()) return fail("cannot read " + o.trace_path);
  if (std::string e = recordLine(sim, pending, ++line_no); !e.empty()) return fail(e);
  SimulationResult result = sim.finish();
  if (result.records == 0) return fail("the trace holds no call records");
  std::cout << simulationJson(result).dump(2) << '\n';
  return 0;
}

}  // namespace perfhat::plan
