// The scheduler alone, on a manual clock: the worker's priorities, debounce, reads waiting for a
// build, cancellation, closing, polling and refresh. Every wait is on a condition (the worker
// asleep until a given time, a build started, an event recorded), never on elapsed time.
#include "server/server/scheduler.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace perfhat::server {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using TimePoint = SchedulerClock::TimePoint;

// Time moves only when the test says. A thread that waits registers the time it waits for, so
// the test can wait until the worker is asleep until a given time (nothing it could run is due).
class ManualClock final : public SchedulerClock {
 public:
  TimePoint now() const override {
    std::lock_guard lock(mu_);
    return now_;
  }
  void waitUntil(CondVar& cv, MutexLock& lock, TimePoint deadline) override {
    {
      std::lock_guard l(mu_);
      if (deadline <= now_) return;
      sleepers_.push_back(deadline);
    }
    changed_.notify_all();
    cv.wait(lock);  // releases the scheduler's lock atomically: wake() cannot slip in between
    std::lock_guard l(mu_);
    sleepers_.erase(std::find(sleepers_.begin(), sleepers_.end(), deadline));
  }
  void advance(std::chrono::milliseconds d) {
    std::lock_guard lock(mu_);
    now_ += d;
  }
  // Blocks until a thread sleeps until `deadline` (TimePoint::max(): until woken).
  bool awaitSleeper(TimePoint deadline) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, 60s, [&] {
      return std::find(sleepers_.begin(), sleepers_.end(), deadline) != sleepers_.end();
    });
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable changed_;
  TimePoint now_ = TimePoint() + 1000h;
  std::vector<TimePoint> sleepers_;
};

constexpr TimePoint kNever = TimePoint::max();

// Records what the worker did, in order; builds can be held at a gate.
class Recorder {
 public:
  void add(std::string event) {
    {
      std::lock_guard lock(mu_);
      events_.push_back(std::move(event));
    }
    cv_.notify_all();
  }
  std::vector<std::string> events() const {
    std::lock_guard lock(mu_);
    return events_;
  }
  // Blocks until `n` events start with `prefix`.
  bool awaitCount(const std::string& prefix, size_t n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 60s, [&] {
      return static_cast<size_t>(std::count_if(events_.begin(), events_.end(), [&](const auto& e) {
               return e.rfind(prefix, 0) == 0;
             })) >= n;
    });
  }
  bool awaitEvent(const std::string& event) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 60s, [&] {
      return std::find(events_.begin(), events_.end(), event) != events_.end();
    });
  }
  void hold(bool held) {
    {
      std::lock_guard lock(mu_);
      held_ = held;
    }
    cv_.notify_all();
  }
  void passGate() {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, 60s, [&] { return !held_; });
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> events_;
  bool held_ = false;
};

std::shared_ptr<const Document> doc(const std::string& name, int version) {
  return std::make_shared<const Document>("file:///" + name, "/" + name, version,
                                          "text v" + std::to_string(version));
}

class SchedulerTest : public ::testing::Test {
 protected:
  SchedulerTest() : scheduler_(work(), clock_) {
    scheduler_.start(1 << 20, "sched-test");
    // The analyzer is configured first, then the worker sleeps: nothing else is due.
    EXPECT_TRUE(clock_.awaitSleeper(kNever));
  }
  ~SchedulerTest() override {
    rec_.hold(false);
    scheduler_.requestStop();
    scheduler_.join();
  }

  Scheduler::Work work() {
    Scheduler::Work w;
    w.configure = [this] { rec_.add("configure"); };
    w.close = [this](const std::string& path) { rec_.add("close " + path); };
    w.build = [this](const Document& d) {
      const std::string what = d.uri().substr(8) + " v" + std::to_string(d.version());
      rec_.add("start " + what);
      rec_.passGate();
      auto s = std::make_shared<analysis::Snapshot>();
      s->path = d.path();
      s->version = d.version();
      rec_.add("build " + what);
      return Build{s, {"key:" + d.uri().substr(8)}, nullptr, build_ms_};
    };
    w.built = [this](const std::string& uri, const Build& b, const Document&,
                     const analysis::SnapshotPtr& before) {
      rec_.add("built " + uri.substr(8) + " v" + std::to_string(b.snapshot->version) +
               (before ? " after v" + std::to_string(before->version) : ""));
    };
    w.poll = [this] { rec_.add("poll"); };
    w.refresh = [this] { rec_.add("refresh"); };
    return w;
  }
  // Opens documents (version 1) and waits until each is built and the worker is asleep.
  void openSettled(std::initializer_list<const char*> names) {
    for (const char* name : names) scheduler_.open(doc(name, 1));
    for (const char* name : names)
      ASSERT_TRUE(rec_.awaitEvent("built " + std::string(name) + " v1"));
    ASSERT_TRUE(clock_.awaitSleeper(kNever));
  }
  // Asks for a rebuild of one open document, as a refresh does; how many were marked.
  size_t markDirty(const std::string& name) {
    return scheduler_.markDirtyWhere(
        [uri = "file:///" + name](const std::string& u, const Build&) { return u == uri; });
  }
  // Events of one kind ("build", "poll", ...), in order.
  std::vector<std::string> only(const std::string& kind) const {
    std::vector<std::string> out;
    for (const auto& e : rec_.events())
      if (e.rfind(kind, 0) == 0) out.push_back(e);
    return out;
  }
  WaitingRead read(int id, const std::string& name) {
    return WaitingRead{
        id, "file:///" + name, [this, id](const analysis::Snapshot& s, const Document& d) {
          rec_.add("read " + std::to_string(id) + " snapshot v" + std::to_string(s.version) +
                   " text v" + std::to_string(d.version()));
        }};
  }

  ManualClock clock_;
  Recorder rec_;
  double build_ms_ = 100;
  Scheduler scheduler_;
};

TEST(DebouncePolicy, LastBuildTimeTimesRatioClampedToTheBounds) {
  DebouncePolicy p{2.0, 50, 500};
  EXPECT_EQ(p.delay(10), 50ms);
  EXPECT_EQ(p.delay(100), 200ms);
  EXPECT_EQ(p.delay(1000), 500ms);
  EXPECT_EQ(p.delay(0.1234), 50ms);
  EXPECT_EQ((DebouncePolicy{1.0, 0, 10}.delay(0.25)), 250us);
}

TEST_F(SchedulerTest, OpenedDocumentIsBuiltAtOnce) {
  scheduler_.open(doc("a.cc", 1));
  ASSERT_TRUE(rec_.awaitEvent("built a.cc v1"));
  EXPECT_THAT(only("build"), ElementsAre("build a.cc v1"));
  EXPECT_EQ(only("configure").size(), 1u);
  EXPECT_TRUE(scheduler_.waitIdle(1h));
}

TEST_F(SchedulerTest, BurstOfEditsDuringABuildBecomesOneDebouncedBuild) {
  openSettled({"a.cc"});
  // The first edit after a settled build is analysed at once.
  rec_.hold(true);
  scheduler_.edit(doc("a.cc", 2));
  ASSERT_TRUE(rec_.awaitEvent("start a.cc v2"));
  // Edits while it builds are a burst: they wait one debounce (last build 100 ms × 1.0).
  const TimePoint t = clock_.now();
  scheduler_.edit(doc("a.cc", 3));
  clock_.advance(10ms);
  scheduler_.edit(doc("a.cc", 4));
  rec_.hold(false);
  ASSERT_TRUE(clock_.awaitSleeper(t + 10ms + 100ms));
  EXPECT_THAT(only("build"), ElementsAre("build a.cc v1", "build a.cc v2"));
  clock_.advance(99ms);
  scheduler_.wake();
  ASSERT_TRUE(clock_.awaitSleeper(t + 10ms + 100ms));  // still 1 ms early
  EXPECT_EQ(only("build").size(), 2u);
  clock_.advance(1ms);
  scheduler_.wake();
  ASSERT_TRUE(rec_.awaitEvent("built a.cc v4 after v2"));
  EXPECT_THAT(only("build"), ElementsAre("build a.cc v1", "build a.cc v2", "build a.cc v4"));
}

TEST_F(SchedulerTest, DebounceFollowsTheLastBuildTimeWithinThePolicy) {
  scheduler_.setDebounce({2.0, 50, 500});
  build_ms_ = 1000;  // × 2 → clamped to 500 ms
  rec_.hold(true);
  scheduler_.open(doc("a.cc", 1));
  ASSERT_TRUE(rec_.awaitEvent("start a.cc v1"));
  scheduler_.edit(doc("a.cc", 2));  // while the first build runs
  const TimePoint t = clock_.now();
  rec_.hold(false);
  // The delay was computed at the edit, from the build before (none yet: 0 ms → 50 ms).
  ASSERT_TRUE(clock_.awaitSleeper(t + 50ms));
  clock_.advance(50ms);
  scheduler_.wake();
  ASSERT_TRUE(rec_.awaitEvent("built a.cc v2 after v1"));
  ASSERT_TRUE(clock_.awaitSleeper(kNever));
  // Now the last build took 1000 ms: a burst waits the maximum.
  rec_.hold(true);
  scheduler_.edit(doc("a.cc", 3));
  ASSERT_TRUE(rec_.awaitEvent("start a.cc v3"));
  scheduler_.edit(doc("a.cc", 4));
  const TimePoint t2 = clock_.now();
  rec_.hold(false);
  ASSERT_TRUE(clock_.awaitSleeper(t2 + 500ms));
}

TEST_F(SchedulerTest, ReadWaitsForTheBuildOfTheLatestText) {
  rec_.hold(true);
  scheduler_.open(doc("a.cc", 1));
  ASSERT_TRUE(rec_.awaitEvent("start a.cc v1"));
  EXPECT_EQ(scheduler_.readOrQueue(read(7, "a.cc")).state, Scheduler::ReadState::Queued);
  // An edit during the build: the read must not see a snapshot of older text.
  scheduler_.edit(doc("a.cc", 2));
  rec_.hold(false);
  // The debounced v2: no build had finished at the edit, so the minimum, 50 ms.
  ASSERT_TRUE(clock_.awaitSleeper(clock_.now() + 50ms));
  EXPECT_TRUE(only("read").empty());
  clock_.advance(50ms);
  scheduler_.wake();
  ASSERT_TRUE(rec_.awaitEvent("read 7 snapshot v2 text v2"));
  // The read ran before the build's follow-up (diagnostics are published after answers).
  auto events = rec_.events();
  EXPECT_LT(std::find(events.begin(), events.end(), "read 7 snapshot v2 text v2"),
            std::find(events.begin(), events.end(), "built a.cc v2 after v1"));
  Scheduler::Current now = scheduler_.readOrQueue(read(8, "a.cc"));
  ASSERT_EQ(now.state, Scheduler::ReadState::Now);
  EXPECT_EQ(now.snapshot->version, 2);
  EXPECT_EQ(now.doc->version(), 2);
  EXPECT_EQ(scheduler_.readOrQueue(read(9, "b.cc")).state, Scheduler::ReadState::NotOpen);
}

TEST_F(SchedulerTest, CancelledReadIsReturnedOnceAndNeverRuns) {
  rec_.hold(true);
  scheduler_.open(doc("a.cc", 1));
  ASSERT_TRUE(rec_.awaitEvent("start a.cc v1"));
  scheduler_.readOrQueue(read(1, "a.cc"));
  scheduler_.readOrQueue(read(2, "a.cc"));
  auto cancelled = scheduler_.cancel(1);
  ASSERT_TRUE(cancelled);
  EXPECT_EQ(cancelled->id, 1);
  EXPECT_FALSE(scheduler_.cancel(1));
  EXPECT_FALSE(scheduler_.cancel(42));
  rec_.hold(false);
  ASSERT_TRUE(rec_.awaitEvent("built a.cc v1"));
  EXPECT_THAT(only("read"), ElementsAre("read 2 snapshot v1 text v1"));
  EXPECT_FALSE(scheduler_.cancel(2));  // already answered
}

TEST_F(SchedulerTest, CloseReturnsWaitingReadsAndClosesTheFileOnTheWorker) {
  rec_.hold(true);
  scheduler_.open(doc("a.cc", 1));
  ASSERT_TRUE(rec_.awaitEvent("start a.cc v1"));
  scheduler_.readOrQueue(read(1, "a.cc"));
  auto orphans = scheduler_.close("file:///a.cc");
  ASSERT_TRUE(orphans);
  ASSERT_EQ(orphans->size(), 1u);
  EXPECT_EQ((*orphans)[0].id, 1);
  EXPECT_FALSE(scheduler_.close("file:///a.cc"));
  EXPECT_FALSE(scheduler_.latest("file:///a.cc"));
  rec_.hold(false);
  ASSERT_TRUE(rec_.awaitEvent("close /a.cc"));
  EXPECT_TRUE(scheduler_.waitIdle(1h));
  // The build that finished after the close is dropped: nothing follows it, no read ran.
  EXPECT_TRUE(only("built").empty());
  EXPECT_TRUE(only("read").empty());
  EXPECT_TRUE(scheduler_.snapshots().empty());
}

TEST_F(SchedulerTest, WorkerRunsConfigureThenClosesThenTasksThenBuilds) {
  scheduler_.open(doc("old.cc", 1));
  ASSERT_TRUE(rec_.awaitEvent("built old.cc v1"));
  // Hold the worker inside a task while work of every kind arrives.
  std::mutex m;
  std::condition_variable cv;
  bool release = false;
  scheduler_.post([&] {
    rec_.add("task 1");
    std::unique_lock lock(m);
    cv.wait_for(lock, 60s, [&] { return release; });
  });
  ASSERT_TRUE(rec_.awaitEvent("task 1"));
  scheduler_.open(doc("a.cc", 1));
  scheduler_.post([&] { rec_.add("task 2"); });
  scheduler_.close("file:///old.cc");
  scheduler_.post([&] { rec_.add("task 3"); });
  scheduler_.reconfigureAnalyzer();
  {
    std::lock_guard lock(m);
    release = true;
  }
  cv.notify_all();
  ASSERT_TRUE(rec_.awaitEvent("built a.cc v1"));
  EXPECT_THAT(rec_.events(),
              ElementsAre("configure", "start old.cc v1", "build old.cc v1", "built old.cc v1",
                          "task 1", "configure", "close /old.cc", "task 2", "task 3",
                          "start a.cc v1", "build a.cc v1", "built a.cc v1"));
}

TEST_F(SchedulerTest, DueDocumentsAreBuiltEarliestFirst) {
  openSettled({"a.cc", "b.cc"});
  rec_.hold(true);
  scheduler_.edit(doc("a.cc", 2));  // settled: at once
  ASSERT_TRUE(rec_.awaitEvent("start a.cc v2"));
  scheduler_.edit(doc("b.cc", 2));  // b settled too: due now
  clock_.advance(5ms);
  scheduler_.edit(doc("a.cc", 3));  // a burst: due in 100 ms
  rec_.hold(false);
  ASSERT_TRUE(clock_.awaitSleeper(clock_.now() + 100ms));
  EXPECT_THAT(only("build"),
              ElementsAre("build a.cc v1", "build b.cc v1", "build a.cc v2", "build b.cc v2"));
}

TEST_F(SchedulerTest, PollsEveryIntervalOnlyWhileDocumentsAreOpen) {
  const TimePoint t = clock_.now();
  scheduler_.setPolling(true, 30s, true);
  ASSERT_TRUE(clock_.awaitSleeper(kNever));  // nothing open: no poll timer
  clock_.advance(30s);
  scheduler_.open(doc("a.cc", 1));
  ASSERT_TRUE(rec_.awaitEvent("poll"));  // overdue once a document is open
  ASSERT_TRUE(clock_.awaitSleeper(t + 60s));
  EXPECT_EQ(only("poll").size(), 1u);
  clock_.advance(30s);
  scheduler_.wake();
  ASSERT_TRUE(clock_.awaitSleeper(t + 90s));
  EXPECT_EQ(only("poll").size(), 2u);
  scheduler_.setPolling(false, 30s, false);
  ASSERT_TRUE(clock_.awaitSleeper(kNever));
  scheduler_.setPolling(true, 0s, true);  // an interval of 0 is off
  ASSERT_TRUE(clock_.awaitSleeper(kNever));
  EXPECT_EQ(only("poll").size(), 2u);
}

TEST_F(SchedulerTest, RefreshFollowsOnceAllAskedRebuildsAreDone) {
  openSettled({"a.cc", "b.cc"});
  EXPECT_TRUE(only("refresh").empty());
  scheduler_.markAllDirty(true);
  ASSERT_TRUE(rec_.awaitEvent("refresh"));
  auto events = rec_.events();
  EXPECT_EQ(events.back(), "refresh");
  EXPECT_EQ(only("built").size(), 4u);
  // Only the documents whose last build used a key.
  size_t marked = scheduler_.markDirtyWhere([](const std::string&, const Build& last) {
    return last.feedback_keys == std::vector<std::string>{"key:b.cc"};
  });
  EXPECT_EQ(marked, 1u);
  ASSERT_TRUE(rec_.awaitCount("refresh", 2));
  EXPECT_EQ(only("built").back(), "built b.cc v1 after v1");
  EXPECT_EQ(only("built").size(), 5u);
  // None selected: nothing is rebuilt and no refresh is asked for.
  EXPECT_EQ(scheduler_.markDirtyWhere([](const std::string&, const Build&) { return false; }), 0u);
}

// A rebuild asked for by a refresh (new feedback, a config change) waited from that moment, not
// from the document's last edit hours before; a document already waiting for its edit's build
// keeps the edit's time.
TEST_F(SchedulerTest, ARebuildByARefreshIsQueuedFromTheRefresh) {
  openSettled({"a.cc", "b.cc"});
  clock_.advance(5h);  // since the last edit
  // The worker is busy with a task while the rebuilds are asked for.
  auto busy = [&](const std::string& name) {
    rec_.hold(true);
    scheduler_.post([this, name] {
      rec_.add(name);
      rec_.passGate();
    });
    ASSERT_TRUE(rec_.awaitEvent(name));
  };
  // The task ends `later`; the rebuilds and the refresh after them follow.
  auto release = [&](std::chrono::milliseconds later, size_t refreshes) {
    clock_.advance(later);
    rec_.hold(false);
    return rec_.awaitCount("refresh", refreshes);
  };
  busy("task 1");
  scheduler_.markAllDirty(true);
  ASSERT_TRUE(release(250ms, 1));
  EXPECT_EQ(scheduler_.lastQueuedMs(), 250.0);

  clock_.advance(5h);
  busy("task 2");
  EXPECT_EQ(markDirty("b.cc"), 1u);
  ASSERT_TRUE(release(40ms, 2));
  EXPECT_EQ(only("built").back(), "built b.cc v1 after v1");
  EXPECT_EQ(scheduler_.lastQueuedMs(), 40.0);

  // Edited, then refreshed before its build began: queued from the edit.
  busy("task 3");
  scheduler_.edit(doc("a.cc", 2));
  clock_.advance(30ms);
  EXPECT_EQ(markDirty("a.cc"), 1u);
  ASSERT_TRUE(release(20ms, 3));
  EXPECT_EQ(only("built").back(), "built a.cc v2 after v1");
  EXPECT_EQ(scheduler_.lastQueuedMs(), 50.0);
}

TEST_F(SchedulerTest, StopHandsBackWaitingReadsAndEndsTheWorker) {
  rec_.hold(true);
  scheduler_.open(doc("a.cc", 1));
  ASSERT_TRUE(rec_.awaitEvent("start a.cc v1"));
  scheduler_.readOrQueue(read(1, "a.cc"));
  std::vector<WaitingRead> orphans = scheduler_.requestStop();
  ASSERT_EQ(orphans.size(), 1u);
  EXPECT_TRUE(scheduler_.requestStop().empty());
  rec_.hold(false);
  scheduler_.join();  // the build in progress finishes; nothing after it runs
  EXPECT_TRUE(only("read").empty());
}

}  // namespace
}  // namespace perfhat::server
