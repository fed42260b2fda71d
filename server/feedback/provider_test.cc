#include "server/feedback/provider.h"

#include <gtest/gtest.h>

#include "server/feedback/file_source.h"

namespace perfhat::feedback {
namespace {

using namespace std::chrono_literals;

// Counts requests; answers from a FileSource loaded from text (real parsing, no network).
class CountingSource : public FeedbackSource {
 public:
  CountingSource() : file_("") {
    file_.loadText(R"js({"items":[
      {"key":"a()","mangled":"_Z1av","stats":{"count":1,"mean_ns":10}},
      {"key":"b(int)","stats":{"count":2,"mean_ns":20}},
      {"key":"b(double)","stats":{"count":3,"mean_ns":30}}]})js");
  }
  FetchResult batchGet(const std::vector<std::string>& keys) override {
    ++requests;
    last = keys;
    if (down) return {FetchStatus::Unreachable, "connection refused", {}};
    return file_.batchGet(keys);
  }
  ChangesResult changes(const std::string&) override { return next_changes; }
  std::string describe() const override { return "counting"; }

  int requests = 0;
  bool down = false;
  std::vector<std::string> last;
  ChangesResult next_changes;

 private:
  FileSource file_;
};

TEST(LspFeedbackProvider, OneBulkRequestForTheMissesOnly) {
  ManualClock clock;
  auto src = std::make_shared<CountingSource>();
  FeedbackProvider p(src, {100, 600s}, clock);
  auto r1 = p.get({"a()", "zzz()", "a()"});
  EXPECT_EQ(src->requests, 1);
  EXPECT_EQ(src->last, (std::vector<std::string>{"a()", "zzz()"}));
  EXPECT_EQ(r1.items.size(), 1u);
  auto r2 = p.get({"a()", "zzz()", "_Z1av"});
  EXPECT_EQ(src->requests, 2);  // only the mangled spelling was new
  EXPECT_EQ(src->last, std::vector<std::string>{"_Z1av"});
  EXPECT_EQ(r2.cache_hits, 2u);    // a() and the negative entry for zzz()
  EXPECT_EQ(r2.items.size(), 1u);  // deduplicated across spellings
}

TEST(LspFeedbackProvider, NameLevelKeysGetEveryOverload) {
  ManualClock clock;
  auto src = std::make_shared<CountingSource>();
  FeedbackProvider p(src, {100, 600s}, clock);
  auto r = p.get({"b(long)"});
  EXPECT_EQ(r.items.size(), 2u);
}

// A key the handler names as probed by no variant (issue 23) becomes an item without stats that
// says so, cached like any answer; a key merely missing stays without an item.
class UnprobedSource : public FeedbackSource {
 public:
  FetchResult batchGet(const std::vector<std::string>&) override {
    FetchResult r{FetchStatus::Ok, "", {}};
    r.response.missing = {"never()", "zzz()"};
    UnprobedKey u;
    u.key = "never()";
    u.exposure.releases = {"r7"};
    u.exposure.replicas = 6;
    r.response.unprobed = {u};
    return r;
  }
  ChangesResult changes(const std::string&) override { return {}; }
  std::string describe() const override { return "unprobed"; }
};

TEST(LspFeedbackProvider, UnprobedKeysBecomeItemsThatSaySo) {
  ManualClock clock;
  FeedbackProvider p(std::make_shared<UnprobedSource>(), {100, 600s}, clock);
  auto r = p.get({"never()", "zzz()"});
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].key, "never()");
  EXPECT_FALSE(r.items[0].stats);
  ASSERT_TRUE(r.items[0].exposure);
  EXPECT_EQ(r.items[0].exposure->replicas, 6u);
  EXPECT_EQ(r.items[0].exposure->replicas_probed, 0u);
  EXPECT_EQ(p.cached({"never()"}).items.size(), 1u);
}

TEST(LspFeedbackProvider, TtlExpiryRefetches) {
  ManualClock clock;
  auto src = std::make_shared<CountingSource>();
  FeedbackProvider p(src, {100, 600s}, clock);
  p.get({"a()"});
  clock.advance(300s);
  p.get({"a()"});
  EXPECT_EQ(src->requests, 1);
  clock.advance(301s);
  auto r = p.get({"a()"});
  EXPECT_EQ(src->requests, 2);
  EXPECT_FALSE(r.stale);
}

TEST(LspFeedbackProvider, DownSourceServesExpiredEntriesAsStale) {
  ManualClock clock;
  auto src = std::make_shared<CountingSource>();
  FeedbackProvider p(src, {100, 60s}, clock);
  p.get({"a()"});
  clock.advance(61s);
  src->down = true;
  auto r = p.get({"a()", "b(int)"});
  EXPECT_TRUE(r.stale);
  EXPECT_EQ(r.status, FetchStatus::Unreachable);
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].key, "a()");
  EXPECT_EQ(p.counters().failures, 1u);
}

TEST(LspFeedbackProvider, ChangesInvalidateMatchingEntries) {
  ManualClock clock;
  auto src = std::make_shared<CountingSource>();
  FeedbackProvider p(src, {100, 600s}, clock);
  p.get({"_Z1av", "b(int)"});
  EXPECT_EQ(p.cacheSize(), 2u);
  src->next_changes.keys = {"a()"};  // canonical key of the entry cached under its mangled name
  src->next_changes.cursor = "9";
  p.poll();
  EXPECT_EQ(p.cacheSize(), 1u);
  p.get({"_Z1av", "b(int)"});
  EXPECT_EQ(src->requests, 2);
  EXPECT_EQ(src->last, std::vector<std::string>{"_Z1av"});
}

TEST(LspFeedbackProvider, LruBoundHolds) {
  ManualClock clock;
  auto src = std::make_shared<CountingSource>();
  FeedbackProvider p(src, {2, 600s}, clock);
  p.get({"a()", "b(int)", "c()", "d()"});
  EXPECT_EQ(p.cacheSize(), 2u);
}

}  // namespace
}  // namespace perfhat::feedback
