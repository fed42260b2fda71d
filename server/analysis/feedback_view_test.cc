#include "server/analysis/feedback_view.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/analysis/snapshot.h"

namespace perfhat::analysis {
namespace {

FeedbackItem item(const std::string& key, const std::string& mangled = "") {
  FeedbackItem it;
  it.key = key;
  it.mangled = mangled;
  it.stats = Stats{};
  return it;
}

TEST(InMemoryFeedbackTest, FindsByKeyCanonicalKeyMangledAndName) {
  InMemoryFeedback view({item("int agile::BacklogService::storyPoints(const agile::Story&) const",
                              "_ZNK5agile14BacklogService11storyPointsERKNS_5StoryE"),
                         item("agile::Svc::load(int)"), item("agile::Svc::load(double)")},
                        /*stale=*/true);
  const char* canonical = "agile::BacklogService::storyPoints(const agile::Story &) const";
  ASSERT_NE(view.find(canonical), nullptr);
  EXPECT_EQ(view.find(canonical),
            view.find("_ZNK5agile14BacklogService11storyPointsERKNS_5StoryE"));
  EXPECT_EQ(view.find("agile::Svc::load(long)"), nullptr);
  EXPECT_EQ(view.findByName("agile::Svc::load").size(), 2u);
  EXPECT_EQ(view.findByName("agile::BacklogService::storyPoints").size(), 1u);
  EXPECT_TRUE(view.findByName("nothing").empty());
  EXPECT_EQ(view.all().size(), 3u);
  EXPECT_TRUE(view.stale());
  view.add(item("late()"));
  EXPECT_NE(view.find("late()"), nullptr);
}

TEST(SnapshotTest, NodeAtFindsTheInnermostNode) {
  Snapshot s;
  FunctionInfo f;
  f.range = {{0, 0}, {10, 1}};
  Node root;
  root.range = f.range;
  Node loop;
  loop.id = 1;
  loop.kind = NodeKind::Loop;
  loop.range = {{2, 2}, {6, 3}};
  Node call;
  call.id = 2;
  call.kind = NodeKind::Call;
  call.range = {{3, 4}, {3, 20}};
  f.nodes = {root, loop, call};
  FunctionInfo lambda;  // nested function: its nodes are innermost
  lambda.range = {{8, 0}, {9, 5}};
  Node lroot;
  lroot.range = lambda.range;
  lambda.nodes = {lroot};
  s.functions = {f, lambda};
  const FunctionInfo* owner = nullptr;
  EXPECT_EQ(s.nodeAt({3, 10}, &owner)->kind, NodeKind::Call);
  EXPECT_EQ(owner, &s.functions[0]);
  EXPECT_EQ(s.nodeAt({3, 20})->kind, NodeKind::Loop);  // end is exclusive
  EXPECT_EQ(s.nodeAt({1, 0})->kind, NodeKind::Function);
  EXPECT_EQ(s.nodeAt({8, 3}, &owner), &s.functions[1].nodes[0]);
  EXPECT_EQ(owner, &s.functions[1]);
  EXPECT_EQ(s.nodeAt({20, 0}, &owner), nullptr);
  EXPECT_EQ(owner, nullptr);
}

}  // namespace
}  // namespace perfhat::analysis
