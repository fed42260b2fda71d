// Variant masks: the manifest reader, and the engine probing only its variant's functions.
#include "variant_mask.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "engine.h"
#include "perfhat/memory_exporter.hpp"
#include "perfhat/perfhat.hpp"

namespace variantns {
[[gnu::noinline]] int probed(int x) {
  PERFHAT_FUNCTION();
  return x + 1;
}
[[gnu::noinline]] int masked(int x) {
  PERFHAT_FUNCTION();
  return x * 2;
}
}  // namespace variantns

namespace {

using perfhat::detail::VariantMask;

// Variant 0 probes probed(int), variant 1 masked(int); replicas 0, 1, 2 run 0, 1, 0.
const char* kManifest =
    "{\"release\":\"r7\",\"strategy\":\"rb\",\"h_bound\":1,\"variants\":["
    "{\"id\":0,\"units\":[\"variantns::probed(int)\"]},"
    "{\"id\":1,\"units\":[\"variantns::masked(int)\"]}],\"assignment\":[0,1,0]}";

std::string write_manifest(const std::string& text) {
  std::string path = ::testing::TempDir() + "variant_manifest_" + std::to_string(::getpid()) + "_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".json";
  std::ofstream(path) << text;
  return path;
}

TEST(InstrVariantMask, PicksTheVariantByIdOrByTheReplicasAssignment) {
  VariantMask by_replica;
  ASSERT_EQ(by_replica.parse(kManifest, 1, -1), "");
  EXPECT_EQ(by_replica.release(), "r7");
  EXPECT_EQ(by_replica.variant(), 1);
  EXPECT_EQ(by_replica.replica(), 1);
  // Keys match in any spelling that normalizes to the manifest's: pretty function, mangled.
  EXPECT_TRUE(by_replica.admits("int variantns::masked(int)", nullptr, "", false));
  EXPECT_TRUE(by_replica.admits("", "_ZN9variantns6maskedEi", "", false));
  EXPECT_FALSE(by_replica.admits("int variantns::probed(int)", nullptr, "", false));
  EXPECT_TRUE(by_replica.admits("int variantns::probed(int)", nullptr, "", true));  // request

  VariantMask by_id;
  ASSERT_EQ(by_id.parse(kManifest, 1, 0), "");  // PERFHAT_VARIANT wins over the replica
  EXPECT_EQ(by_id.variant(), 0);
  EXPECT_TRUE(by_id.admits("int variantns::probed(int)", nullptr, "", false));
}

TEST(InstrVariantMask, RefusesWhatDoesNotNameOneVariant) {
  VariantMask m;
  EXPECT_NE(m.parse("not json", 0, -1).find("not a JSON object"), std::string::npos);
  EXPECT_NE(m.parse(kManifest, 3, -1).find("replica 3 is not in the assignment (3 replicas)"),
            std::string::npos);
  EXPECT_NE(m.parse(kManifest, -1, 5).find("variant 5 is not in the manifest"), std::string::npos);
  EXPECT_NE(m.parse(kManifest, -1, -1).find("neither"), std::string::npos);
  EXPECT_NE(m.parse(R"({"release":"a b","variants":[{"id":0,"units":[]}]})", -1, 0).find("release"),
            std::string::npos);
  EXPECT_NE(m.parse(R"({"release":"a","variants":[{"id":0,"units":[1]}]})", -1, 0).find("strings"),
            std::string::npos);
  EXPECT_EQ(m.size(), 0u);  // nothing half-loaded

  perfhat::Config c;
  c.variant = 0;  // a variant without its manifest is refused, not ignored
  std::unique_ptr<VariantMask> out;
  EXPECT_NE(perfhat::detail::load_variant_mask(c, out).find("PERFHAT_VARIANT_MANIFEST"),
            std::string::npos);
  c.variant_manifest = "/nonexistent/manifest.json";
  EXPECT_NE(perfhat::detail::load_variant_mask(c, out).find("cannot read"), std::string::npos);
  EXPECT_EQ(out, nullptr);
}

TEST(InstrVariantMask, ReadsTheEnvironment) {
  ::setenv("PERFHAT_VARIANT_MANIFEST", "/x/m.json", 1);
  ::setenv("PERFHAT_REPLICA", "4", 1);
  ::setenv("PERFHAT_VARIANT", "oops", 1);
  perfhat::Config c = perfhat::Config::from_env();
  ::unsetenv("PERFHAT_VARIANT_MANIFEST");
  ::unsetenv("PERFHAT_REPLICA");
  ::unsetenv("PERFHAT_VARIANT");
  EXPECT_EQ(c.variant_manifest, "/x/m.json");
  EXPECT_EQ(c.replica, 4);
  EXPECT_EQ(c.variant, -1);  // reported on stderr, left unset
}

TEST(InstrVariantMask, EngineProbesOnlyItsVariantAndLabelsEveryRecord) {
  std::string path = write_manifest(kManifest);
  perfhat::Config c;
  c.sampler = "full";
  c.cycle_s = 1e9;
  c.export_interval_s = 1e9;
  c.variant_manifest = path;
  c.replica = 2;  // variant 0: probed(int) only
  auto ex = std::make_shared<perfhat::MemoryExporter>();
  ASSERT_TRUE(perfhat::init(c, ex)) << perfhat::last_error();
  for (int i = 0; i < 20; ++i) {
    variantns::probed(i);
    variantns::masked(i);
  }
  perfhat::flush();
  EXPECT_EQ(ex->calls_of("variantns::probed"), 20u);
  EXPECT_EQ(ex->calls_of("variantns::masked"), 0u);  // not counted, not timed, not recorded
  size_t masked_spans = 0, probed_spans = 0;
  for (const auto& s : ex->spans()) {
    masked_spans += s.function.find("variantns::masked") != std::string::npos;
    probed_spans += s.function.find("variantns::probed") != std::string::npos;
  }
  EXPECT_EQ(masked_spans, 0u);
  EXPECT_EQ(probed_spans, 20u);
  perfhat::Resource r = ex->resource();
  EXPECT_EQ(r.release, "r7");
  EXPECT_EQ(r.variant, "0");
  EXPECT_EQ(r.replica, "2");
  perfhat::shutdown();

  // Re-initialized as replica 1 (variant 1): the registered sites are re-checked.
  c.replica = 1;
  ex = std::make_shared<perfhat::MemoryExporter>();
  ASSERT_TRUE(perfhat::init(c, ex));
  for (int i = 0; i < 5; ++i) {
    variantns::probed(i);
    variantns::masked(i);
  }
  perfhat::flush();
  EXPECT_EQ(ex->calls_of("variantns::probed"), 0u);
  EXPECT_EQ(ex->calls_of("variantns::masked"), 5u);
  EXPECT_EQ(ex->resource().variant, "1");
  perfhat::shutdown();

  // Without a manifest every probe is on again and no variant is claimed.
  c.variant_manifest.clear();
  c.replica = -1;
  ex = std::make_shared<perfhat::MemoryExporter>();
  ASSERT_TRUE(perfhat::init(c, ex));
  for (int i = 0; i < 3; ++i) {
    variantns::probed(i);
    variantns::masked(i);
  }
  perfhat::flush();
  EXPECT_EQ(ex->calls_of("variantns::probed"), 3u);
  EXPECT_EQ(ex->calls_of("variantns::masked"), 3u);
  EXPECT_EQ(ex->resource().release, "");
  perfhat::shutdown();
  std::remove(path.c_str());
}

TEST(InstrVariantMask, ABadManifestDisablesProbesWithTheReason) {
  std::string path = write_manifest(R"({"release":"r1","variants":[]})");
  perfhat::Config c;
  c.variant_manifest = path;
  c.variant = 0;
  auto ex = std::make_shared<perfhat::MemoryExporter>();
  EXPECT_FALSE(perfhat::init(c, ex));
  EXPECT_NE(perfhat::last_error().find("PERFHAT_VARIANT_MANIFEST"), std::string::npos);
  std::remove(path.c_str());
}

}  // namespace
