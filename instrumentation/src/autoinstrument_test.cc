// This file is compiled with -finstrument-functions and linked with perfhat::autoinstrument:
// every function below reports to libperfhat with no macro.
#include <gtest/gtest.h>

#include "perfhat/memory_exporter.hpp"
#include "perfhat/perfhat.hpp"

namespace perfhat::autoinstrument {
size_t functions_seen();
}

namespace autons {
__attribute__((noinline)) int leaf(int x) { return x * 3; }
__attribute__((noinline)) int middle(int x) { return leaf(x) + leaf(x + 1); }
__attribute__((noinline)) int skipped(int x) { return x - 1; }
}  // namespace autons

TEST(InstrAutoInstrument, HooksRecordSymbolizedSpans) {
  perfhat::Config c;
  c.sampler = "full";
  c.scope = "autons::*,-autons::skipped*";
  auto ex = std::make_shared<perfhat::MemoryExporter>();
  ASSERT_TRUE(perfhat::init(c, ex)) << perfhat::last_error();
  int total = 0;
  for (int i = 0; i < 5; ++i) total += autons::middle(i) + autons::skipped(i);
  EXPECT_GT(total, 0);
  perfhat::flush();
  int leaf = 0, middle = 0, skipped = 0;
  uint64_t middle_id = 0;
  std::vector<uint64_t> leaf_parents;
  for (const auto& s : ex->spans()) {
    if (s.function == "autons::leaf(int)") {
      ++leaf;
      EXPECT_EQ(s.mangled, "_ZN6autons4leafEi");
      leaf_parents.push_back(s.parent_span_id);
    }
    if (s.function == "autons::middle(int)") {
      ++middle;
      middle_id = s.span_id;
    }
    if (s.function.find("skipped") != std::string::npos) ++skipped;
    // The test body itself is outside the allowed scope.
    EXPECT_EQ(s.function.find("AutoInstrument"), std::string::npos) << s.function;
  }
  EXPECT_EQ(leaf, 10);
  EXPECT_EQ(middle, 5);
  EXPECT_EQ(skipped, 0);
  ASSERT_FALSE(leaf_parents.empty());
  EXPECT_EQ(leaf_parents.back(), middle_id);  // nesting kept across enter/exit hooks
  EXPECT_GE(perfhat::autoinstrument::functions_seen(), 3u);
  perfhat::shutdown();
}
