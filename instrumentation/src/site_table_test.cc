// The hooks' address table: everything inserted is found, the first level holds 3/4 of its
// 1,024 entries before a second level is made, and a level grows 8 times.
#include "site_table.h"

#include <gtest/gtest.h>

#include <vector>

namespace perfhat::autoinstrument {
namespace {

TEST(InstrSiteTable, StartsSmallGrowsByLevelsAndFindsEveryEntry) {
  // A new table each run (--gtest_repeat), kept reachable and never freed, as the hooks' own
  // table is (its levels outlive every hook).
  // The list itself is never destroyed either: a static vector is freed before the leak check
  // at exit, and the tables would then read as leaked.
  static auto* tables = new std::vector<SiteTable*>;
  auto* table =
      tables->emplace_back(new SiteTable(new SiteTable::Entry[SiteTable::kFirstLevelSize]));
  // Distinct function-like addresses (16-byte aligned, as functions are) and distinct values.
  std::vector<char> fns(16 * 8000);
  auto fn = [&](size_t i) { return static_cast<const void*>(&fns[16 * i]); };
  auto site = [](size_t i) { return reinterpret_cast<detail::Site*>((i + 1) * 64); };
  const size_t first_capacity = SiteTable::kFirstLevelSize / 4 * 3;
  for (size_t i = 0; i < first_capacity; ++i) ASSERT_TRUE(table->insert(fn(i), site(i)));
  EXPECT_EQ(table->levels(), 1u);
  ASSERT_TRUE(table->insert(fn(first_capacity), site(first_capacity)));
  EXPECT_EQ(table->levels(), 2u);
  const size_t second_capacity = SiteTable::kFirstLevelSize * SiteTable::kGrowth / 4 * 3;
  for (size_t i = first_capacity + 1; i < 8000; ++i) ASSERT_TRUE(table->insert(fn(i), site(i)));
  EXPECT_EQ(table->levels(), 8000 > first_capacity + second_capacity ? 3u : 2u);
  for (size_t i = 0; i < 8000; ++i) ASSERT_EQ(table->find(fn(i)), site(i)) << i;
  EXPECT_EQ(table->find(fns.data() + 1), nullptr);
}

}  // namespace
}  // namespace perfhat::autoinstrument
