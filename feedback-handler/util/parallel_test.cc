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

// Runs `chunks` chunks over [0, n) through run(n, chunks, fn), checks that every index is covered
// exactly once, in contiguous ranges in chunk order, and returns the thread of each chunk.
template <typename Run>
std::vector<std::thread::id> coveredOnce(Run run, size_t n, size_t chunks) {
  std::vector<std::atomic<int>> seen(n);
  std::vector<std::pair<size_t, size_t>> ranges(chunks);
  std::vector<std::thread::id> ids(chunks);
  run(n, chunks, [&](size_t c, size_t begin, size_t end) {
    ranges[c] = {begin, end};
    ids[c] = std::this_thread::get_id();
    for (size_t i = begin; i < end; ++i) seen[i]++;
  });
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(seen[i], 1) << n << " " << chunks << " " << i;
  EXPECT_EQ(ranges.front().first, 0u);
  EXPECT_EQ(ranges.back().second, n);
  for (size_t c = 1; c < chunks; ++c) EXPECT_EQ(ranges[c].first, ranges[c - 1].second);
  return ids;
}

// Chunk 0 runs on the calling thread and the others elsewhere.
TEST(Parallel, ChunksCoverTheRangeOnceAndChunkZeroRunsHere) {
  for (size_t n : {0u, 1u, 7u, 1000u, 1001u}) {
    for (size_t chunks : {1u, 2u, 3u, 4u}) {
      auto ids = coveredOnce(
          [](size_t n, size_t chunks, auto&& fn) { forEachChunk(n, chunks, fn); }, n, chunks);
      EXPECT_EQ(ids[0], std::this_thread::get_id());
      for (size_t c = 1; c < chunks; ++c) EXPECT_NE(ids[c], ids[0]);
    }
  }
}

// A failing chunk does not stop the others; its exception reaches the caller once all are done.
template <typename Run>
void expectFailingChunkRethrownAfterTheOthers(Run run) {
  std::atomic<int> finished{0};
  EXPECT_THROW(run(400, 4,
                   [&](size_t c, size_t, size_t) {
                     if (c == 2) throw std::runtime_error("chunk 2 failed");
                     std::this_thread::sleep_for(std::chrono::milliseconds(20));
                     ++finished;
                   }),
               std::runtime_error);
  EXPECT_EQ(finished, 3);
}

TEST(Parallel, AChunksExceptionIsRethrownAfterAllChunksFinished) {
  expectFailingChunkRethrownAfterTheOthers(
      [](size_t n, size_t chunks, auto&& fn) { forEachChunk(n, chunks, fn); });
}

// A team's steps cover the range as forEachChunk does; chunk c runs on thread c % threads, the
// same threads in every step (they are started once), and chunk 0 on the caller.
TEST(ChunkTeam, StepsCoverTheRangeOnceOnTheSameThreads) {
  ChunkTeam team(3);
  ASSERT_EQ(team.threads(), 3u);
  std::vector<std::thread::id> first_step;
  auto onTeam = [&team](size_t n, size_t chunks, auto&& fn) { team.forEachChunk(n, chunks, fn); };
  for (int step = 0; step < 20; ++step) {
    for (size_t n : {0u, 1u, 7u, 1000u}) {
      for (size_t chunks : {1u, 2u, 3u, 5u, 8u}) {
        auto ids = coveredOnce(onTeam, n, chunks);
        for (size_t c = 0; c < chunks; ++c) {
          EXPECT_EQ(ids[c], ids[c % 3]) << c;
          if (c < 3) {
            EXPECT_EQ(ids[c] == std::this_thread::get_id(), c == 0) << c;
          }
        }
        if (chunks == 3) {
          if (first_step.empty()) first_step = ids;
          EXPECT_EQ(ids, first_step);  // no thread is started again
        }
      }
    }
  }
}

// Steps further apart than the spin find their workers parked, and wake them; a team whose
// workers are parked, spinning or never used is destroyed promptly.
TEST(ChunkTeam, WorkersParkAfterTheSpinAndWakeForTheNextStep) {
  {
    ChunkTeam team(2, std::chrono::microseconds(200));
    for (int step = 0; step < 5; ++step) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      std::atomic<int> sum{0};
      team.forEachChunk(100, 2, [&](size_t, size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) sum += static_cast<int>(i);
      });
      EXPECT_EQ(sum, 4950);
    }
  }
  { ChunkTeam spinning(4, std::chrono::seconds(60)); }
  {
    ChunkTeam one(1);
    EXPECT_EQ(one.threads(), 1u);
    std::thread::id id;
    one.forEachChunk(10, 4, [&](size_t, size_t, size_t) { id = std::this_thread::get_id(); });
    EXPECT_EQ(id, std::this_thread::get_id());
  }
}

TEST(ChunkTeam, AChunksExceptionIsRethrownAfterAllChunksFinishedAndTheTeamStaysUsable) {
  ChunkTeam team(4);
  expectFailingChunkRethrownAfterTheOthers(
      [&team](size_t n, size_t chunks, auto&& fn) { team.forEachChunk(n, chunks, fn); });
  std::atomic<int> finished{0};
  team.forEachChunk(400, 4, [&](size_t, size_t, size_t) { ++finished; });
  EXPECT_EQ(finished, 4);
  // Without a team the same call runs as the free forEachChunk.
  finished = 0;
  forEachChunk(static_cast<ChunkTeam*>(nullptr), 400, 4,
               [&](size_t, size_t, size_t) { ++finished; });
  EXPECT_EQ(finished, 4);
}

}  // namespace
}  // namespace perfhat::handler
