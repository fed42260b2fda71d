#include "feedback-handler/dynamic/graph_export.h"

#include <gtest/gtest.h>

namespace perfhat::handler::dynamic {
namespace {

DDSketch calls(double n) {
  DDSketch s;
  s.add(1000, n);
  return s;
}

GraphMetrics window(double ab, double ac) {
  CallGraph g;
  g.addRow(AggKind::kFunction, "a", "", calls(1));
  g.addRow(AggKind::kFunction, "b(int, \"x\")", "", calls(ab));
  g.addRow(AggKind::kCallSite, "b(int, \"x\")", "a", calls(ab));
  if (ac > 0) {
    g.addRow(AggKind::kFunction, "c", "", calls(ac));
    g.addRow(AggKind::kCallSite, "c", "a", calls(ac));
  }
  g.addKnown("c");
  return derive(g);
}

TEST(GraphExport, VisitMatrixHasOneRowPerExecutionAndTheColumnSums) {
  const std::vector<Execution> ex{{"w1", window(3, 2)}, {"w2", window(4, 0)}};
  EXPECT_EQ(matrixCsv(ex, Matrix::kVisits),
            "\"execution\",\"a\",\"b(int, \"\"x\"\")\",\"c\"\n"
            "\"w1\",1,3,2\n"
            "\"w2\",1,4,0\n"
            "\"VC*\",2,7,2\n");
  EXPECT_EQ(matrixCsv(ex, Matrix::kFanOut),
            "\"execution\",\"a\",\"b(int, \"\"x\"\")\",\"c\"\n\"w1\",2,0,0\n\"w2\",1,0,0\n");
  EXPECT_EQ(matrixCsv(ex, Matrix::kFanIn),
            "\"execution\",\"a\",\"b(int, \"\"x\"\")\",\"c\"\n\"w1\",0,1,1\n\"w2\",0,1,0\n");
}

TEST(GraphExport, EdgesMostCallsFirst) {
  EXPECT_EQ(edgesCsv(window(3, 5)),
            "\"caller\",\"callee\",\"count\"\n\"a\",\"c\",5\n\"a\",\"b(int, \"\"x\"\")\",3\n");
}

TEST(GraphExport, DotHasLabelledArcsOnlyForArcsTaken) {
  const std::string dot = toDot(window(3, 0));
  EXPECT_NE(dot.find("\"a\" -> \"b(int, \\\"x\\\")\" [label=\"3\"];"), std::string::npos) << dot;
  EXPECT_EQ(dot.find("\"c\""), std::string::npos) << dot;  // never called: no node, no arc
  EXPECT_NE(dot.find("\\n3 calls"), std::string::npos) << dot;
}

TEST(GraphExport, DotAroundAFocusStopsAtTheDepth) {
  CallGraph g;
  const char* chain[] = {"a", "b", "c", "d", "e"};
  for (int i = 0; i < 5; ++i) g.addRow(AggKind::kFunction, chain[i], "", calls(1));
  for (int i = 0; i + 1 < 5; ++i) g.addRow(AggKind::kCallSite, chain[i + 1], chain[i], calls(1));
  const std::string dot = toDot(derive(g), {.focus = "c", .depth = 1});
  EXPECT_NE(dot.find("\"b\" -> \"c\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("\"c\" -> \"d\""), std::string::npos) << dot;
  EXPECT_EQ(dot.find("\"a\""), std::string::npos) << dot;
  EXPECT_EQ(dot.find("\"e\""), std::string::npos) << dot;
}

}  // namespace
}  // namespace perfhat::handler::dynamic
