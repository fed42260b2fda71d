// reliability_report: writes the reliability suite's figures (the JSON lines the suite appended
// to $PERFHAT_RELIABILITY_RESULTS, suite.h) as the tables of docs/reliability.md, between the
// markers "<!-- reliability:begin -->" and "<!-- reliability:end -->" (the rest of the file is
// kept).
//   reliability_report RESULTS.jsonl DOC.md --commit C --date D --machine M
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

using nlohmann::json;

std::string fmt(double v, int digits = 1) {
  if (v < 0) return "–";
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}
std::string mb(double kb) { return kb < 0 ? "–" : fmt(kb / 1024.0, 1) + " MB"; }
std::string num(double v) { return fmt(v, 0); }
std::string cell(std::string s) {
  for (size_t p = 0; (p = s.find('|', p)) != std::string::npos; p += 2) s.replace(p, 1, "\\|");
  return s;
}

std::vector<json> of(const std::vector<json>& all, const std::string& kind) {
  std::vector<json> out;
  for (const auto& r : all) {
    if (r.value("kind", "") == kind) out.push_back(r);
  }
  return out;
}

std::string tables(const std::vector<json>& all, const std::string& commit, const std::string& date,
                   const std::string& machine) {
  std::ostringstream o;
  std::string mode = all.empty() ? "?" : all.front().value("mode", "?");
  o << "Run: " << date << ", commit `" << commit << "`, " << mode << " mode, " << machine
    << ".\n\n";

  // Test outcomes.
  std::vector<std::string> failed, skipped;
  size_t passed = 0;
  for (const auto& r : of(all, "outcome")) {
    if (r.value("skipped", false)) {
      skipped.push_back(r["test"]);
    } else if (r.value("passed", false)) {
      ++passed;
    } else {
      failed.push_back(r["test"]);
    }
  }

  double peak_kb = -1;
  for (const auto& r : all) {
    if (r.contains("peak_rss_kb")) peak_kb = std::max(peak_kb, r["peak_rss_kb"].get<double>());
  }
  size_t kills = 0, pg_restarts = 0, acked = 0, lost = 0;
  for (const auto& r : of(all, "durability")) {
    (r.value("fault", "").find("SIGKILL") != std::string::npos ? kills : pg_restarts) +=
        r.value("faults", 0);
    acked += r.value("batches_acked", 0);
    lost += r.value("lost", 0);
  }
  auto load = of(all, "load");
  size_t hostile = 0, hostile_ok = 0;
  for (const auto& r : of(all, "hostile")) {
    ++hostile;
    hostile_ok += r.value("ok", false);
  }
  size_t unhealthy = 0;
  for (const auto& r : of(all, "hostile_health")) {
    unhealthy += !r.value("healthy", false) || !r.value("data_intact", false);
  }

  o << "| what | measured |\n|---|---|\n";
  // The two goals for the default settings, first.
  for (const auto& l : load) {
    const double p99 = l["read_p99_ms"];
    const bool met = p99 >= 0 && p99 <= 100 && l.value("read_failures", 1) == 0;
    o << "| goal: batchGet p99 ≤ 100 ms under " << l["exporters"] << " busy exporters | "
      << (met ? "met" : "**not met**") << ": p99 " << fmt(p99) << " ms (max "
      << fmt(l["read_max_ms"]) << " ms) |\n";
  }
  for (const auto& s : of(all, "slow_connections")) {
    const bool all_answered = s.value("answered", 0) == s.value("probes_attempted", -1);
    const double p99 = s["healthz_p99_ms"];
    const bool met = all_answered && p99 >= 0 && p99 <= 100;
    o << "| goal: /healthz ≤ 100 ms with " << s["connections"] << " slow connections open | "
      << (met ? "met" : "**not met**") << ": "
      << (all_answered ? "p99 " + fmt(p99) + " ms" : std::string("unanswered within 10 s"))
      << " |\n";
  }
  for (const auto& l : load) {
    o << "| load held | " << l["exporters"] << " keep-alive exporters at "
      << num(l["offered_spans_per_s"]) << " spans/s offered: " << num(l["accepted_spans_per_s"])
      << " spans/s accepted over " << fmt(l["seconds"], 0) << " s (" << l["batches_late"] << " of "
      << l["batches_acked"] << " batches sent late; " << l["exporters_starved"]
      << " exporters never served during the run); rejected " << l["rejected"] << ", dropped "
      << l["dropped"] << " |\n";
    o << "| batchGet under load | " << l["readers"] << " readers, " << l["keys_per_read"]
      << " keys each: " << l["reads"] << " reads, p50 " << fmt(l["read_p50_ms"]) << " ms, p99 "
      << fmt(l["read_p99_ms"]) << " ms, max " << fmt(l["read_max_ms"])
      << " ms (with no exporters, in the same run: p50 " << fmt(l.value("idle_read_p50_ms", -1.0))
      << " ms, p99 " << fmt(l.value("idle_read_p99_ms", -1.0))
      << " ms; a client that keeps Nagle's algorithm on (cpp-httplib's default): p50 "
      << fmt(l.value("idle_nagle_read_p50_ms", -1.0)) << " ms); " << l["read_failures"]
      << " failed |\n";
    const double warm = l["rss_after_warmup_kb"], end = l["rss_end_kb"];
    o << "| handler memory over the load | RSS " << mb(warm) << " after warm-up → " << mb(end)
      << " at the end (" << (warm > 0 ? fmt(100.0 * (end - warm) / warm, 1) : "–") << " %), peak "
      << mb(l["peak_rss_kb"]) << " |\n";
  }
  for (const auto& s : of(all, "slow_connections")) {
    o << "| /healthz with " << s["connections"] << " slow connections open | " << s["answered"]
      << " of " << s.value("probes_attempted", 0) << " probes answered";
    if (s.value("answered", 0) < s.value("probes_attempted", 0)) {
      o << " (no answer within 10 s; probing stopped there)";
    }
    if (s.value("answered", 0) > 0) {
      o << ", p50 " << fmt(s["healthz_p50_ms"]) << " ms, p99 " << fmt(s["healthz_p99_ms"]) << " ms";
    }
    o << "; a batchGet meanwhile: "
      << (s.value("read_status", 0) ? std::to_string(s["read_status"].get<int>()) : "no answer")
      << " |\n";
  }
  o << "| faults injected and survived | " << kills << " SIGKILLs of the handler during ingest, "
    << pg_restarts << " PostgreSQL restarts under load";
  for (const auto& c : of(all, "intake_corruption")) {
    o << ", 1 corrupted intake-log record (" << c["recovered_before"] << " records before it and "
      << c["recovered_after"] << " after it replayed, " << c["wrong_count"] << " wrong counts)";
  }
  o << " |\n";
  o << "| data lost | **" << lost << "** of " << acked << " acknowledged batches |\n";
  o << "| hostile inputs tried | " << hostile << ", " << hostile_ok
    << " answered as documented; handler unhealthy or data damaged after " << unhealthy
    << " cases |\n";
  for (const auto& r : of(all, "lsp")) {
    o << "| language server, handler " << r["fault"].get<std::string>() << " | hints "
      << (r.value("answered", false) ? "answered" : "**not answered**")
      << "; an inlayHint right after an edit took " << fmt(r["hint_after_edit_ms"], 0)
      << " ms, re-analysis after perfhat.refresh " << fmt(r["reanalysis_after_refresh_ms"], 0)
      << " ms; cached value " << (r.value("cached_value_shown", false) ? "shown" : "**not shown**")
      << ", " << (r.value("marked_stale", false) ? "marked stale" : "**not marked stale**") << "; "
      << r["messages"] << " message(s) |\n";
  }
  o << "| peak memory (handler, any case) | " << mb(peak_kb) << " |\n";
  o << "| tests | " << passed << " passed, " << failed.size() << " failed, " << skipped.size()
    << " skipped |\n\n";
  if (!failed.empty()) {
    o << "Failed in this run:";
    for (const auto& f : failed) o << " `" << f << "`";
    o << "\n\n";
  }

  o << "### Durability\n\n| store | fault | rounds | batches sent | acknowledged | refused | no "
       "answer | lost |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : of(all, "durability")) {
    o << "| " << cell(r["store"]) << " | " << cell(r["fault"]) << " | " << r["faults"] << " | "
      << r["batches_sent"] << " | " << r["batches_acked"] << " | " << cell(r["refused"].dump())
      << " | " << r["no_response"] << " | " << r["lost"] << " |\n";
  }
  o << "\n### Hostile inputs\n\n| endpoint | input | expected | got |\n|---|---|---|---|\n";
  for (const auto& r : of(all, "hostile")) {
    const int status = r.value("status", 0);
    std::string got = status == -1  ? "no answer in 10 s"
                      : status == 0 ? "connection closed"
                                    : std::to_string(status);
    o << "| " << cell(r["endpoint"]) << " | " << cell(r["input"]) << " | " << cell(r["expected"])
      << " | " << (r.value("ok", false) ? got : "**" + got + "**") << " |\n";
  }
  return o.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: reliability_report RESULTS.jsonl DOC.md [--commit C] [--date D] "
                 "[--machine M]\n";
    return 2;
  }
  std::map<std::string, std::string> opt;
  for (int i = 3; i + 1 < argc; i += 2) opt[argv[i]] = argv[i + 1];
  std::vector<json> all;
  std::ifstream in(argv[1]);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) all.push_back(json::parse(line, nullptr, false));
    if (!all.empty() && all.back().is_discarded()) all.pop_back();
  }
  if (all.empty()) {
    std::cerr << "reliability_report: no results in " << argv[1] << "\n";
    return 1;
  }
  std::ifstream doc_in(argv[2]);
  std::string doc((std::istreambuf_iterator<char>(doc_in)), {});
  const std::string begin = "<!-- reliability:begin -->", end = "<!-- reliability:end -->";
  const size_t b = doc.find(begin), e = doc.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b) {
    std::cerr << "reliability_report: " << argv[2] << " lacks the markers " << begin << " / " << end
              << "\n";
    return 1;
  }
  std::string table = tables(all, opt["--commit"], opt["--date"], opt["--machine"]);
  doc = doc.substr(0, b + begin.size()) + "\n" + table + doc.substr(e);
  std::ofstream(argv[2]) << doc;
  return 0;
}
