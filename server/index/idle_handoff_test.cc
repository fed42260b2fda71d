// The indexer's lock-free handoff (idle_handoff.h): what a pass publishes is applied on the
// handoff's own thread, in order, and never on the pass' thread.
#include "server/index/idle_handoff.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "server/index/index_test_util.h"
#include "server/index/indexer.h"

namespace perfhat::index {
namespace {

TEST(IdleHandoff, RunsEverythingInOrderOnItsOwnThread) {
  std::vector<int> seen;  // written by the handoff's thread only
  std::vector<std::thread::id> threads;
  {
    IdleHandoff h;
    std::thread producer([&] {
      for (int i = 0; i < 5000; ++i)
        h.push([&seen, &threads, i] {
          seen.push_back(i);
          threads.push_back(std::this_thread::get_id());
        });
    });
    producer.join();
  }  // the destructor runs what is left
  ASSERT_EQ(seen.size(), 5000u);
  for (int i = 0; i < 5000; ++i) ASSERT_EQ(seen[i], i);
  for (const auto& t : threads) EXPECT_NE(t, std::this_thread::get_id());
}

// With `publish` set, the pass applies nothing to the index itself: summaries and progress
// reach the index only when the published work runs (on the server, the handoff's thread).
TEST(IndexerPublish, ThePassHandsItsResultsOver) {
  testing::Workspace ws;
  ws.write("a.cc", "int a(int x) { return x + 1; }\n");
  ws.write("b.cc", "int b(int x) { return x * 2; }\n");
  IndexerOptions o;
  o.database = ws.database({"a.cc", "b.cc"});
  o.idle_priority = false;
  std::vector<std::function<void()>> published;
  o.publish = [&](std::function<void()> work) { published.push_back(std::move(work)); };
  auto idx = std::make_shared<WorkspaceIndex>();
  Indexer indexer(idx, nullptr, o);
  size_t reports = 0;
  IndexStats st = indexer.run([&](const IndexProgress&) { ++reports; });
  EXPECT_EQ(st.parsed, 2u);
  EXPECT_EQ(reports, 0u);
  EXPECT_FALSE(idx->find("a(int)"));
  for (auto& w : published) w();
  EXPECT_EQ(reports, 2u);
  EXPECT_TRUE(idx->find("a(int)"));
  EXPECT_TRUE(idx->find("b(int)"));
}

}  // namespace
}  // namespace perfhat::index
