#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/features/features.h"
#include "server/features/test_snapshot.h"

namespace perfhat::features {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace testing;  // NOLINT: fixture helpers

const CodeAction* titled(const std::vector<CodeAction>& actions, std::string_view prefix) {
  for (const CodeAction& a : actions) {
    if (a.title.rfind(prefix, 0) == 0) return &a;
  }
  return nullptr;
}

TEST(FeaturesCodeActions, SetIterationsInsertsAnnotationAboveTheInnermostLoop) {
  const T4 t;
  const Range cursor{t.tasks_range.start, t.tasks_range.start};
  const std::vector<CodeAction> actions = codeActions(t.snapshot, cursor, Options(), kT4Source);
  const CodeAction* a = titled(actions, "Set expected iterations…");
  ASSERT_NE(a, nullptr);
  EXPECT_THAT(a->title, HasSubstr("now 3, constant trip count"));
  ASSERT_EQ(a->edits.size(), 1u);
  EXPECT_EQ(a->edits[0].range, (Range{{6, 0}, {6, 0}}));
  EXPECT_EQ(a->edits[0].new_text, "    // perfhat: iterations=3\n");
}

TEST(FeaturesCodeActions, SetIterationsUpdatesAnExistingAnnotation) {
  // Same loop, with an annotation the user wrote earlier (tab-indented).
  const std::string text =
      "void f() {\n"
      "\t// perfhat: iterations=5\n"
      "\tfor (;;) { g(); }\n"
      "}\n";
  FunctionBuilder b("f", "f()", {{0, 0}, {3, 1}}, find(text, 0, "f"), {0, 8});
  b.loop(0, analysis::LoopKind::For, {{2, 1}, {2, 18}}, find(text, 2, "(;;)").end, 5,
         IterationSource::Annotation,
         inferred(10e6, analysis::Model::Loop,
                  analysis::fact::LoopProduct{5, analysis::fact::LoopProduct::Body::Known, 2e6}));
  Snapshot s;
  s.functions.push_back(b.build());
  const Range cursor{{2, 2}, {2, 2}};
  const std::vector<CodeAction> with_text = codeActions(s, cursor, Options(), text);
  const CodeAction* a = titled(with_text, "Set expected");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->edits[0].range, (Range{{1, 0}, {1, 25}}));
  EXPECT_EQ(a->edits[0].new_text, "\t// perfhat: iterations=5");
  // Without the text the snapshot's word is trusted: replace the line above, space-indented.
  const std::vector<CodeAction> without_text = codeActions(s, cursor, Options());
  const CodeAction* blind = titled(without_text, "Set expected");
  ASSERT_NE(blind, nullptr);
  EXPECT_EQ(blind->edits[0].range, (Range{{1, 0}, {2, 0}}));
  EXPECT_EQ(blind->edits[0].new_text, " // perfhat: iterations=5\n");
}

TEST(FeaturesCodeActions, SetIterationsReplacesOnlyTheAnnotationTheAnalysisReads) {
  // The line above the loop, and whether the action replaces it (the analysis reads it as the
  // loop's annotation) or inserts a new line.
  struct Case {
    std::string above;
    bool replaced;
  };
  for (const Case& c :
       {Case{"\t// perfhat: iterations=5 rows per page", true},
        Case{"\t//perfhat:iterations = 2.5", true}, Case{"\t// perfhat: iterations=?", false},
        Case{"\t// perfhat: iterations=", false},
        Case{"\tx = 1;  // perfhat: iterations=5", false}}) {
    const std::string text = "void f() {\n" + c.above + "\n\tfor (;;) { g(); }\n}\n";
    FunctionBuilder b("f", "f()", {{0, 0}, {3, 1}}, find(text, 0, "f"), {0, 8});
    b.loop(0, analysis::LoopKind::For, {{2, 1}, {2, 18}}, find(text, 2, "(;;)").end, 5,
           IterationSource::Annotation,
           inferred(10e6, analysis::Model::Loop,
                    analysis::fact::LoopProduct{5, analysis::fact::LoopProduct::Body::Known, 2e6}));
    Snapshot s;
    s.functions.push_back(b.build());
    const std::vector<CodeAction> actions = codeActions(s, {{2, 2}, {2, 2}}, Options(), text);
    const CodeAction* a = titled(actions, "Set expected");
    ASSERT_NE(a, nullptr) << c.above;
    if (c.replaced) {
      EXPECT_EQ(a->edits[0].range, (Range{{1, 0}, {1, static_cast<int>(c.above.size())}}))
          << c.above;
      EXPECT_EQ(a->edits[0].new_text, "\t// perfhat: iterations=5") << c.above;
    } else {
      EXPECT_EQ(a->edits[0].range, (Range{{2, 0}, {2, 0}})) << c.above;
      EXPECT_EQ(a->edits[0].new_text, "\t// perfhat: iterations=5\n") << c.above;
    }
  }
}

TEST(FeaturesCodeActions, ShowProductionDataForTheNodeAndItsFunction) {
  const T4 t;
  const Range cursor{t.stories_range.start, t.stories_range.start};
  const std::vector<CodeAction> actions = codeActions(t.snapshot, cursor, Options(), kT4Source);
  std::vector<std::vector<std::string>> args;
  for (const CodeAction& a : actions) {
    if (a.command == "perfhat.showData") args.push_back(a.arguments);
  }
  EXPECT_THAT(args, ElementsAre(ElementsAre("agile::stories()"), ElementsAre(t.fn().key)));
  // The call is the loop's range expression: the action sets that loop's iterations.
  EXPECT_NE(titled(actions, "Set expected iterations… (now 100"), nullptr);
  EXPECT_NE(titled(actions, "Show production data"), nullptr);
}

TEST(FeaturesCodeActions, LoopWithProductionDataAndNothingOutsideFunctions) {
  const T4 t;
  const std::vector<CodeAction> on_loop = codeActions(t.snapshot, {{4, 3}, {4, 3}}, Options());
  EXPECT_NE(titled(on_loop, "Set expected iterations… (now 100, production loop data)"), nullptr);
  const CodeAction* data = titled(on_loop, "Show production data: range-for loop");
  ASSERT_NE(data, nullptr);
  EXPECT_THAT(data->arguments, ElementsAre(t.fn().key, "loop", "0"));
  EXPECT_TRUE(codeActions(t.snapshot, {{0, 0}, {0, 0}}, Options()).empty());
}

}  // namespace
}  // namespace perfhat::features
