#include "feedback-handler/util/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

namespace perfhat::handler {
namespace {

TEST(Parallel, ChunkCountGivesEveryChunkItsMinimumAndNoMoreThanTheThreads) {
  EXPECT_EQ(chunkCount(0, 1024, 4), 1u);
  EXPECT_EQ(chunkCount(2047, 1024, 4), 1u);
  EXPECT_EQ(chunkCount(2048, 1024, 4), 2u);
  EXPECT_EQ(chunkCount(100000, 1024, 4), 4u);
  EXPECT_EQ(chunkCount(100000, 1024, 1), 1u);
  EXPECT_EQ(chunkCount(10, 0, 4), 4u);  // no minimum
  EXPECT_EQ(requestThreads(3), 3u);
  EXPECT_GE(requestThreads(0), 1u);
  EXPECT_LE(requestThreads(0), 4u);
}

// Every index is covered exactly once, in contiguous ranges in chunk order; chunk 0 runs on the
// calling thread and the others elsewhere.
TEST(Parallel, ChunksCoverTheRangeOnceAndChunkZeroRunsHere) {
  for (size_t n : {0u, 1u, 7u, 1000u, 1001u}) {
    for (size_t chunks : {1u, 2u, 3u, 4u}) {
      std::vector<std::atomic<int>> seen(n);
      std::vector<std::pair<size_t, size_t>> ranges(chunks);
      std::vector<std::thread::id> ids(chunks);
      forEachChunk(n, chunks, [&](size_t c, size_t begin, size_t end) {
        ranges[c] = {begin, end};
        ids[c] = std::this_thread::get_id();
        for (size_t i = begin; i < end; ++i) seen[i]++;
      });
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i], 1) << n << " " << chunks << " " << i;
      EXPECT_EQ(ranges.front().first, 0u);
      EXPECT_EQ(ranges.back().second, n);
      for (size_t c = 1; c < chunks; ++c) {
        EXPECT_EQ(ranges[c].first, ranges[c - 1].second);
        EXPECT_NE(ids[c], ids[0]);
      }
      EXPECT_EQ(ids[0], std::this_thread::get_id());
    }
  }
}

// A failing chunk does not stop the others; its exception reaches the caller once all are done.
TEST(Parallel, AChunksExceptionIsRethrownAfterAllChunksFinished) {
  std::atomic<int> finished{0};
  EXPECT_THROW(forEachChunk(400, 4,
                            [&](size_t c, size_t, size_t) {
                              if (c == 2) throw std::runtime_error("chunk 2 failed");
                              std::this_thread::sleep_for(std::chrono::milliseconds(20));
                              ++finished;
                            }),
               std::runtime_error);
  EXPECT_EQ(finished, 3);
}

}  // namespace
}  // namespace perfhat::handler
