#include "experiment/report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include "experiment/analysis.h"
#include "experiment/boxplot.h"
#include "experiment/commands.h"

namespace perfhat::experiment {
namespace {

const std::string kStudy = PERFHAT_SOURCE_DIR "/samples/study/study.json";
const std::string kCsv = PERFHAT_SOURCE_DIR "/samples/study/example-measurements.csv";

ReportInput sampleInput() {
  ReportInput in;
  in.study = loadStudy(kStudy);
  in.study_path = kStudy;
  in.design = assignGroups(in.study, 1);  // the example measurements follow seed 1
  in.csv_name = "example-measurements.csv";
  in.csv_text = readBoundedFile(kCsv);
  in.rows = parseMeasurementsCsv(in.csv_text, in.csv_name);
  in.stats = analyse(in.rows, in.csv_name);
  return in;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ExperimentReport, BoxStatsQuartilesAndOutliers) {
  const BoxStats b = boxStats({5, 1, 4, 2, 3});
  EXPECT_DOUBLE_EQ(b.q1, 2);
  EXPECT_DOUBLE_EQ(b.median, 3);
  EXPECT_DOUBLE_EQ(b.q3, 4);
  const BoxStats o = boxStats({1, 2, 3, 4, 100});
  ASSERT_EQ(o.outliers, std::vector<double>{100});
  EXPECT_DOUBLE_EQ(o.whisker_high, 4);
  EXPECT_DOUBLE_EQ(o.whisker_low, 1);
}

TEST(ExperimentReport, MarkdownHasTableTwoFiguresDesignAndRawData) {
  const ReportInput in = sampleInput();
  const std::string md = reportMarkdown(in, reportFigures(in));
  EXPECT_NE(md.find("| Task | Measure | Treatment | Control | Mann-Whitney U p |"),
            std::string::npos);
  // Table II's rows in the paper's order: T1 total, T2 total/FE/RCA, T3 total, T4 total/FE/RCA.
  const std::regex row(
      R"(\n\| (T\d) \| (total|FE|RCA) \| [0-9.]+ \([0-9.]+\) \| [0-9.]+ \([0-9.]+\) \| [<0-9. ]+\*? \|)");
  std::vector<std::string> seen;
  for (auto it = std::sregex_iterator(md.begin(), md.end(), row); it != std::sregex_iterator();
       ++it) {
    seen.push_back((*it)[1].str() + " " + (*it)[2].str());
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"T1 total", "T2 total", "T2 FE", "T2 RCA", "T3 total",
                                            "T4 total", "T4 FE", "T4 RCA"}));
  EXPECT_NE(md.find("](figure-total.svg)"), std::string::npos);
  EXPECT_NE(md.find("](figure-fe-rca.svg)"), std::string::npos);
  EXPECT_NE(md.find("\"seed\": 1"), std::string::npos);
  EXPECT_NE(md.find("P01,treatment,T1,total,"), std::string::npos);
}

TEST(ExperimentReport, HtmlIsSelfContainedWithTableBoxPlotsAndData) {
  const ReportInput in = sampleInput();
  const std::string html = reportHtml(in, reportFigures(in));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count(html, "<table id=\"table-ii\">"), 1u);
  EXPECT_EQ(count(html, "<tr>"), 2u * (8 + 1));  // two tables, 8 rows and a header each
  EXPECT_EQ(count(html, "<svg "), 2u);
  EXPECT_EQ(count(html, "<g class=\"box\""), 16u);  // 8 task x measure cells, 2 groups each
  EXPECT_EQ(count(html, "data-category=\"T2 RCA\""), 2u);
  // Nothing loaded from elsewhere: no external scripts, styles, images or links.
  EXPECT_EQ(count(html, "src="), 0u);
  EXPECT_EQ(count(html, "href="), 0u);
  EXPECT_EQ(count(html, "@import"), 0u);
  EXPECT_NE(html.find("<pre id=\"raw-data\">"), std::string::npos);
  EXPECT_NE(html.find("P20,"), std::string::npos);
  EXPECT_NE(html.find("<pre id=\"design\">"), std::string::npos);
  EXPECT_NE(html.find("&quot;participant&quot;: &quot;P01&quot;"), std::string::npos);
}

TEST(ExperimentReport, RowsThatContradictTheDesignAreRejected) {
  ReportInput in = sampleInput();
  EXPECT_NO_THROW(checkAgainstDesign(in));
  in.rows[5].group = in.rows[5].group == "treatment" ? "control" : "treatment";
  try {
    checkAgainstDesign(in);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "example-measurements.csv:" + std::to_string(in.rows[5].line) + ": participant"),
              std::string::npos)
        << e.what();
  }
  in.design = assignGroups(in.study, 2);  // another seed assigns other groups
  in.rows = parseMeasurementsCsv(in.csv_text, in.csv_name);
  EXPECT_THROW(checkAgainstDesign(in), InputError);
}

TEST(ExperimentReport, RunReportWritesEveryFile) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("perfhat-report-test-" + std::to_string(::getpid()));
  std::ostringstream log;
  ASSERT_EQ(runReport({kCsv, kStudy, dir.string(), 1}, log), 0);
  for (const char* f : {"report.md", "report.html", "figure-total.svg", "figure-fe-rca.svg",
                        "measurements.csv", "study.json", "design.json", "stats.json"}) {
    EXPECT_GT(std::filesystem::file_size(dir / f), 100u) << f;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace perfhat::experiment
