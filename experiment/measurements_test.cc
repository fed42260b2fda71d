#include "experiment/measurements.h"

#include <gtest/gtest.h>

#include "experiment/analysis.h"

namespace perfhat::experiment {
namespace {

std::string errorOf(const std::string& csv) {
  try {
    analyse(parseMeasurementsCsv(csv, "m.csv"), "m.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const char* kHeader = "participant,group,task,measure,seconds\n";

TEST(ExperimentMeasurements, ColumnsInAnyOrderAndExtraColumnsIgnored) {
  const auto rows = parseMeasurementsCsv(
      "seconds,note,measure,task,group,participant\r\n12.5,x,fe,T2,control,P1\r\n", "m.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].participant, "P1");
  EXPECT_EQ(rows[0].group, "control");
  EXPECT_EQ(rows[0].measure, "fe");
  EXPECT_DOUBLE_EQ(rows[0].seconds, 12.5);
  EXPECT_EQ(rows[0].line, 2u);
}

TEST(ExperimentMeasurements, ErrorsNameTheLine) {
  const std::string h = kHeader;
  EXPECT_NE(errorOf("participant,group,task,seconds\nP1,control,T1,3\n")
                .find("m.csv:1: missing column 'measure'"),
            std::string::npos);
  EXPECT_NE(errorOf(h + "P1,control,T1,total,3\nP2,placebo,T1,total,3\n")
                .find("m.csv:3: unknown group 'placebo'"),
            std::string::npos);
  EXPECT_NE(errorOf(h + "P1,control,T1,total,three\n").find("m.csv:2: seconds is not a number"),
            std::string::npos);
  EXPECT_NE(errorOf(h + "P1,control,T1,total,nan\n").find("m.csv:2:"), std::string::npos);
  EXPECT_NE(errorOf(h + "P1,control,T1,total,-1\n").find("m.csv:2: seconds is negative"),
            std::string::npos);
  EXPECT_NE(errorOf(h + "P1,control,T1,total,1\nP1,control,T1,total,2\n")
                .find("m.csv:3: participant P1 has a second T1 total value (first on line 2)"),
            std::string::npos);
  EXPECT_NE(errorOf(h + "P1,control,T1,total,1\nP1,treatment,T2,total,2\n")
                .find("m.csv:3: participant P1 is in group treatment"),
            std::string::npos);
  EXPECT_NE(errorOf(h + "P1,control,T1,total\n").find("m.csv:2: expected 5 fields, found 4"),
            std::string::npos);
  EXPECT_NE(errorOf(h + "P1,control,T1,speed,1\n").find("unknown measure 'speed'"),
            std::string::npos);
  EXPECT_NE(errorOf(h).find("no measurements"), std::string::npos);
}

TEST(ExperimentMeasurements, GroupWithFewerThanThreeValuesNamesItsLines) {
  std::string csv = kHeader;
  for (int i = 0; i < 3; ++i) csv += "t" + std::to_string(i) + ",treatment,T2,fe,10\n";
  csv += "c0,control,T2,fe,20\nc1,control,T2,fe,30\n";
  EXPECT_EQ(errorOf(csv),
            "m.csv:5: task T2 measure fe: group control has 2 value(s) (lines 5, 6); at least 3 "
            "are needed");
}

TEST(ExperimentMeasurements, ResultsInTaskThenMeasureOrder) {
  std::string csv = kHeader;
  for (const char* task : {"T10", "T2"}) {
    for (const char* m : {"rca", "total"}) {
      for (int i = 0; i < 3; ++i) {
        csv += "t" + std::to_string(i) + ",treatment," + task + "," + m + "," +
               std::to_string(10 + i) + "\n";
        csv += "c" + std::to_string(i) + ",control," + task + "," + m + "," +
               std::to_string(20 + i) + "\n";
      }
    }
  }
  const auto json = analyse(parseMeasurementsCsv(csv, "m.csv"), "m.csv");
  ASSERT_EQ(json["results"].size(), 4u);
  EXPECT_EQ(json["results"][0]["task"], "T2");
  EXPECT_EQ(json["results"][0]["measure"], "total");
  EXPECT_EQ(json["results"][1]["measure"], "rca");
  EXPECT_EQ(json["results"][2]["task"], "T10");
  EXPECT_EQ(json["results"][0]["cliffs_delta"]["value"], -1.0);
  EXPECT_EQ(json["results"][0]["cliffs_delta"]["magnitude"], "large");
  EXPECT_EQ(json["results"][0]["n"]["treatment"], 3);
}

}  // namespace
}  // namespace perfhat::experiment
