// Site::armed, the probe's one entry test: it folds the global switch and the site's admission
// (scope, variant) together, so a masked probe and a disabled one run the same instructions
// (bench/instrumentation/mask_cost_test.sh measures that). Here: the byte follows every change.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "perfhat/memory_exporter.hpp"
#include "perfhat/perfhat.hpp"

namespace {

using perfhat::detail::Site;

// Sites of our own (as PERFHAT_FUNCTION declares them), so the test can read their state.
Site g_in{nullptr, "int armedns::in(int)", __FILE__, __LINE__, perfhat::detail::kFunction};
Site g_out{nullptr, "int armedns::out(int)", __FILE__, __LINE__, perfhat::detail::kFunction};
Site g_late{nullptr, "int armedns::late(int)", __FILE__, __LINE__, perfhat::detail::kFunction};

[[gnu::noinline]] int call_in(int x) {
  perfhat::detail::Probe p(g_in);
  return x + 1;
}
[[gnu::noinline]] int call_out(int x) {
  perfhat::detail::Probe p(g_out);
  return x + 2;
}
[[gnu::noinline]] int call_late(int x) {
  perfhat::detail::Probe p(g_late);
  return x + 3;
}

bool armed(const Site& s) { return s.armed.load() != 0; }

// Variant 0 probes in(int) and late(int), variant 1 out(int); the engine runs variant 0.
const char* const kArmingManifest =
    R"j({"release":"a1","variants":[{"id":0,"units":["armedns::in(int)","armedns::late(int)"]},)j"
    R"j({"id":1,"units":["armedns::out(int)"]}]})j";

class InstrSiteArming : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "armed_manifest_" + std::to_string(::getpid()) + ".json";
    std::ofstream(path_) << kArmingManifest;
    cfg_.sampler = "full";
    cfg_.cycle_s = 1e9;
    cfg_.export_interval_s = 1e9;
    cfg_.variant_manifest = path_;
    cfg_.variant = 0;
    ex_ = std::make_shared<perfhat::MemoryExporter>();
    ASSERT_TRUE(perfhat::init(cfg_, ex_)) << perfhat::last_error();
  }
  void TearDown() override {
    perfhat::shutdown();
    std::remove(path_.c_str());
  }
  std::string path_;
  perfhat::Config cfg_;
  std::shared_ptr<perfhat::MemoryExporter> ex_;
};

TEST_F(InstrSiteArming, FoldsTheSwitchAndTheVariantIntoOneByte) {
  call_in(1);
  call_out(1);
  // Registered by their first call: the variant's site stays armed, the other is disarmed.
  EXPECT_TRUE(armed(g_in));
  EXPECT_FALSE(armed(g_out));
  EXPECT_EQ(g_out.id.load(), perfhat::detail::kExcludedSite);

  perfhat::set_enabled(false);  // every registered site, whatever its variant
  EXPECT_FALSE(armed(g_in));
  EXPECT_FALSE(armed(g_out));
  for (int i = 0; i < 4; ++i) {
    call_in(i);
    call_out(i);
  }

  perfhat::set_enabled(true);  // back as the variant says
  EXPECT_TRUE(armed(g_in));
  EXPECT_FALSE(armed(g_out));
  for (int i = 0; i < 2; ++i) {
    call_in(i);
    call_out(i);
  }
  perfhat::flush();
  EXPECT_EQ(ex_->calls_of("armedns::in"), 3u);  // the first call and the last two
  EXPECT_EQ(ex_->calls_of("armedns::out"), 0u);

  perfhat::shutdown();  // off until the next init
  EXPECT_FALSE(armed(g_in));
}

TEST_F(InstrSiteArming, ASiteFirstMetWhileOffIsFoundWhenProbesComeBack) {
  perfhat::set_enabled(false);
  ASSERT_EQ(g_late.id.load(), 0u) << "g_late must be new to this test";
  call_late(1);
  // Registered by that call and disarmed: its later calls stop at the first test.
  EXPECT_NE(g_late.id.load(), 0u);
  EXPECT_FALSE(armed(g_late));
  perfhat::set_enabled(true);
  EXPECT_TRUE(armed(g_late));
  for (int i = 0; i < 3; ++i) call_late(i);
  perfhat::flush();
  EXPECT_EQ(ex_->calls_of("armedns::late"), 3u);
}

TEST_F(InstrSiteArming, AForkedChildDisarmsWithoutRecording) {
  call_in(1);  // this thread's state exists and the site is armed
  ASSERT_TRUE(armed(g_in));
  const auto& count = perfhat::detail::t_hot->slots[g_in.id.load()].count;
  const uint64_t before = count.load();
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    for (int i = 0; i < 5; ++i) call_in(i);
    // The child neither records nor keeps the site armed (its calls cost the one test).
    ::_exit(count.load() == before && !armed(g_in) ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(armed(g_in));  // the parent is untouched
}

}  // namespace
