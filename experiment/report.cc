#include "experiment/report.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "experiment/analysis.h"
#include "experiment/boxplot.h"
#include "experiment/commands.h"

namespace perfhat::experiment {
namespace {

using OrderedJson = nlohmann::ordered_json;

const BoxSeries kTreatment{"Treatment (perfhat)", "#1f77b4"};
const BoxSeries kControl{"Control (dashboard)", "#ff7f0e"};

std::string fixed(double v, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string measureLabel(const std::string& m) {
  return m == "total" ? "total" : m == "fe" ? "FE" : "RCA";
}

std::string meanSd(const OrderedJson& r, const char* group) {
  return fixed(r["mean"][group].get<double>(), 1) + " (" + fixed(r["sd"][group].get<double>(), 1) +
         ")";
}

std::string pValue(const OrderedJson& r) {
  const double p = r["mann_whitney"]["p"].get<double>();
  return (p < 0.001 ? std::string("< 0.001") : fixed(p, 3)) + (p < 0.05 ? " *" : "");
}

// Rows of the two tables as cells, shared by the Markdown and HTML writers.
std::vector<std::vector<std::string>> tableTwo(const OrderedJson& stats) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : stats["results"]) {
    rows.push_back({r["task"].get<std::string>(), measureLabel(r["measure"].get<std::string>()),
                    meanSd(r, "treatment"), meanSd(r, "control"), pValue(r)});
  }
  return rows;
}

std::vector<std::vector<std::string>> effectTable(const OrderedJson& stats) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : stats["results"]) {
    auto sw = [&](const char* g) {
      return fixed(r["shapiro"][g]["W"].get<double>(), 3) + " (" +
             fixed(r["shapiro"][g]["p"].get<double>(), 3) + ")";
    };
    rows.push_back({r["task"].get<std::string>(), measureLabel(r["measure"].get<std::string>()),
                    std::to_string(r["n"]["treatment"].get<int>()) + " / " +
                        std::to_string(r["n"]["control"].get<int>()),
                    sw("treatment"), sw("control"), fixed(r["mann_whitney"]["U"].get<double>(), 1),
                    r["mann_whitney"]["method"].get<std::string>(),
                    fixed(r["cliffs_delta"]["value"].get<double>(), 3) + " (" +
                        r["cliffs_delta"]["magnitude"].get<std::string>() + ")",
                    fixed(r["a12"].get<double>(), 3)});
  }
  return rows;
}

const std::vector<std::string> kTableTwoHead{"Task", "Measure", "Treatment", "Control",
                                             "Mann-Whitney U p"};
const std::vector<std::string> kEffectHead{
    "Task",   "Measure",   "n (T / C)", "Shapiro-Wilk W (p), T", "Shapiro-Wilk W (p), C", "U",
    "method", "Cliff's δ", "A12"};

std::string markdownTable(const std::vector<std::string>& head,
                          const std::vector<std::vector<std::string>>& rows) {
  auto line = [](const std::vector<std::string>& cells) {
    std::string s = "|";
    for (const auto& c : cells) s += " " + c + " |";
    return s + "\n";
  };
  std::string s = line(head) + "|";
  for (size_t i = 0; i < head.size(); ++i) s += i < 2 ? "---|" : "---:|";
  s += "\n";
  for (const auto& r : rows) s += line(r);
  return s;
}

std::string htmlTable(const std::string& id, const std::vector<std::string>& head,
                      const std::vector<std::vector<std::string>>& rows) {
  std::string s = "<table id=\"" + id + "\"><thead><tr>";
  for (const auto& h : head) s += "<th>" + escapeXml(h) + "</th>";
  s += "</tr></thead><tbody>\n";
  for (const auto& r : rows) {
    s += "<tr>";
    for (const auto& c : r) s += "<td>" + escapeXml(c) + "</td>";
    s += "</tr>\n";
  }
  return s + "</tbody></table>\n";
}

// The study file names its briefings relative to itself, so the commands use its original path.
std::string commands(const ReportInput& in) {
  const std::string seed = std::to_string(in.design.seed);
  return "perfhat-experiment design --study " + in.study_path + " --seed " + seed +
         "\nperfhat-experiment stats --csv measurements.csv\n"
         "perfhat-experiment report --study " +
         in.study_path + " --seed " + seed + " --csv measurements.csv --out report\n";
}

std::string designText(const ReportInput& in) { return designJson(in.study, in.design).dump(2); }

}  // namespace

void checkAgainstDesign(const ReportInput& in) {
  std::map<std::string, std::string> assigned;
  for (const auto& a : in.design.assignments) assigned[a.participant] = a.group;
  for (const auto& o : in.rows) {
    const auto it = assigned.find(o.participant);
    const std::string at =
        in.csv_name + ":" + std::to_string(o.line) + ": participant " + o.participant;
    if (it == assigned.end()) throw InputError(at + " is not in the study");
    if (it->second != o.group) {
      throw InputError(at + " is in group " + o.group + " here but the design (seed " +
                       std::to_string(in.design.seed) + ") assigns " + it->second);
    }
  }
}

std::vector<ReportFigure> reportFigures(const ReportInput& in) {
  std::map<std::pair<std::string, std::string>, BoxCategory> cells;
  std::vector<std::pair<std::string, std::string>> order;
  for (const auto& r : in.stats["results"]) {
    order.emplace_back(r["task"].get<std::string>(), r["measure"].get<std::string>());
    cells[order.back()] = {order.back().first + " " + measureLabel(order.back().second), {{}, {}}};
  }
  for (const auto& o : in.rows) {
    auto it = cells.find({o.task, o.measure});
    if (it != cells.end()) it->second.groups[o.group == "treatment" ? 0 : 1].push_back(o.seconds);
  }
  std::vector<BoxCategory> totals, phases;
  for (const auto& key : order) (key.second == "total" ? totals : phases).push_back(cells[key]);
  std::vector<ReportFigure> figs;
  figs.push_back(
      {"figure-total.svg",
       "Total time per task, treatment and control (cf. the paper's box plots of total times).",
       boxPlotSvg("Total time per task", {kTreatment, kControl}, totals)});
  if (!phases.empty()) {
    figs.push_back(
        {"figure-fe-rca.svg",
         "Performance-relevant tasks: first encounter (FE) and root-cause analysis (RCA).",
         boxPlotSvg("First encounter (FE) and root-cause analysis (RCA)", {kTreatment, kControl},
                    phases)});
  }
  return figs;
}

std::string reportMarkdown(const ReportInput& in, const std::vector<ReportFigure>& figures) {
  std::string s = "# " + in.study.name + " — results\n\n";
  s += "Between-subject design: " + std::to_string(in.design.assignments.size()) +
       " participants, treatment (perfhat in the editor) and control (dashboard of per-function "
       "averages). Times in seconds.\n\n";
  s += "## Table II — mean (standard deviation) and Mann-Whitney U p-value\n\n";
  s += markdownTable(kTableTwoHead, tableTwo(in.stats));
  s += "\np < 0.05 is marked with *. FE and RCA exist for the performance-relevant tasks only.\n\n";
  s += "## Normality and effect sizes\n\n" + markdownTable(kEffectHead, effectTable(in.stats));
  s += "\nCliff's δ = P(treatment > control) − P(treatment < control); magnitude by Romano's "
       "thresholds 0.147 / 0.33 / 0.474. A12 = P(treatment > control) + P(tie) / 2.\n\n";
  s += "## Figures\n\n";
  for (const auto& f : figures) s += "![" + f.caption + "](" + f.file + ")\n\n";
  s += "## Re-run\n\nThe measurements, study, design and statistics are beside this report "
       "(measurements.csv, study.json, design.json, stats.json):\n\n```sh\n" +
       commands(in) + "```\n\n";
  s += "## Design\n\n```json\n" + designText(in) + "\n```\n\n";
  s += "## Raw data (" + in.csv_name + ")\n\n```csv\n" + in.csv_text +
       (in.csv_text.empty() || in.csv_text.back() == '\n' ? "" : "\n") + "```\n";
  return s;
}

std::string reportHtml(const ReportInput& in, const std::vector<ReportFigure>& figures) {
  std::string s =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" +
      escapeXml(in.study.name) +
      " — results</title>\n<style>\n"
      "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}\n"
      "table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #bbb;padding:4px 8px}\n"
      "td:nth-child(n+3){text-align:right}th{background:#f0f0f0}\n"
      "pre{background:#f7f7f7;padding:8px;overflow:auto;max-height:30em}\n"
      "figure{margin:1em 0}figcaption{font-size:90%;color:#555}\n</style></head><body>\n";
  s += "<h1>" + escapeXml(in.study.name) + " — results</h1>\n";
  s += "<p>Between-subject design: " + std::to_string(in.design.assignments.size()) +
       " participants, treatment (perfhat in the editor) and control (dashboard of per-function "
       "averages). Times in seconds.</p>\n";
  s += "<h2>Table II — mean (standard deviation) and Mann-Whitney U p-value</h2>\n";
  s += htmlTable("table-ii", kTableTwoHead, tableTwo(in.stats));
  s += "<p>p &lt; 0.05 is marked with *. FE and RCA exist for the performance-relevant tasks "
       "only.</p>\n<h2>Normality and effect sizes</h2>\n";
  s += htmlTable("effect-sizes", kEffectHead, effectTable(in.stats));
  s += "<p>Cliff's δ = P(treatment &gt; control) − P(treatment &lt; control); magnitude by "
       "Romano's thresholds 0.147 / 0.33 / 0.474. A12 = P(treatment &gt; control) + P(tie) / "
       "2.</p>\n<h2>Figures</h2>\n";
  for (const auto& f : figures) {
    s += "<figure id=\"" + escapeXml(f.file) + "\">\n" + f.svg + "<figcaption>" +
         escapeXml(f.caption) + "</figcaption></figure>\n";
  }
  s += "<h2>Re-run</h2>\n<pre id=\"commands\">" + escapeXml(commands(in)) + "</pre>\n";
  s += "<h2>Design</h2>\n<pre id=\"design\">" + escapeXml(designText(in)) + "</pre>\n";
  s += "<h2>Study</h2>\n<pre id=\"study\">" + escapeXml(in.study.source.dump(2)) + "</pre>\n";
  s += "<h2>Raw data (" + escapeXml(in.csv_name) + ")</h2>\n<pre id=\"raw-data\">" +
       escapeXml(in.csv_text) + "</pre>\n</body></html>\n";
  return s;
}

int runReport(const ReportOptions& o, std::ostream& out) {
  ReportInput in;
  in.study = loadStudy(o.study);
  in.study_path = o.study;
  in.design = assignGroups(in.study, o.seed);
  in.csv_name = o.csv;
  in.csv_text = readBoundedFile(o.csv);
  in.rows = parseMeasurementsCsv(in.csv_text, o.csv);
  checkAgainstDesign(in);
  in.stats = analyse(in.rows, o.csv);
  const auto figures = reportFigures(in);

  namespace fs = std::filesystem;
  fs::create_directories(o.out_dir);
  auto write = [&](const std::string& name, const std::string& text) {
    const fs::path p = fs::path(o.out_dir) / name;
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f << text;
    f.close();
    if (!f) throw std::runtime_error("cannot write " + p.string());
    out << "wrote " << p.string() << "\n";
  };
  write("report.md", reportMarkdown(in, figures));
  write("report.html", reportHtml(in, figures));
  for (const auto& f : figures) write(f.file, f.svg);
  write("measurements.csv", in.csv_text);
  write("study.json", in.study.source.dump(2) + "\n");
  write("design.json", designText(in) + "\n");
  write("stats.json", in.stats.dump(2) + "\n");
  return 0;
}

}  // namespace perfhat::experiment
