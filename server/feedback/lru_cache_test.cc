#include "server/feedback/lru_cache.h"

#include <gtest/gtest.h>

namespace perfhat::feedback {
namespace {

using namespace std::chrono_literals;

TEST(LspLruCache, EvictsLeastRecentlyUsed) {
  ManualClock clock;
  LruCache<int> c({3, 600s}, clock);
  c.put("a", 1);
  c.put("b", 2);
  c.put("c", 3);
  ASSERT_TRUE(c.get("a").value);  // a is now most recent; b is the LRU
  c.put("d", 4);
  EXPECT_EQ(c.size(), 3u);
  EXPECT_EQ(c.evictions(), 1u);
  EXPECT_FALSE(c.get("b").value);
  const int* a = c.get("a").value;
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(*a, 1);
  const int* cv = c.get("c").value;
  ASSERT_NE(cv, nullptr);
  EXPECT_EQ(*cv, 3);
  const int* d = c.get("d").value;
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(*d, 4);
}

TEST(LspLruCache, PutRefreshesValueAndRecency) {
  ManualClock clock;
  LruCache<int> c({2, 600s}, clock);
  c.put("a", 1);
  c.put("b", 2);
  c.put("a", 10);  // a becomes most recent
  c.put("c", 3);   // evicts b
  EXPECT_FALSE(c.get("b").value);
  const int* a = c.get("a").value;
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(*a, 10);
}

TEST(LspLruCache, TtlExpiryWithInjectedClock) {
  ManualClock clock;
  LruCache<int> c({10, 600s}, clock);
  c.put("a", 1);
  clock.advance(599s);
  auto fresh = c.get("a");
  ASSERT_TRUE(fresh.value);
  EXPECT_FALSE(fresh.expired);
  clock.advance(1s);
  auto old = c.get("a");
  ASSERT_TRUE(old.value);  // still there, as a fallback
  EXPECT_TRUE(old.expired);
  c.put("a", 2);  // refetched: fresh again
  EXPECT_FALSE(c.get("a").expired);
}

TEST(LspLruCache, ExpireAllShrinkAndEraseIf) {
  ManualClock clock;
  LruCache<int> c({10, 600s}, clock);
  for (int i = 0; i < 5; ++i) c.put("k" + std::to_string(i), i);
  c.expireAll();
  EXPECT_TRUE(c.get("k0").expired);
  EXPECT_EQ(c.eraseIf([](const std::string&, int v) { return v % 2 == 0; }), 3u);
  EXPECT_EQ(c.size(), 2u);
  c.setOptions({1, 600s});
  EXPECT_EQ(c.size(), 1u);
}

TEST(LspLruCache, ZeroCapacityStoresNothing) {
  ManualClock clock;
  LruCache<int> c({0, 600s}, clock);
  c.put("a", 1);
  EXPECT_EQ(c.size(), 0u);
  EXPECT_FALSE(c.get("a").value);
}

}  // namespace
}  // namespace perfhat::feedback
