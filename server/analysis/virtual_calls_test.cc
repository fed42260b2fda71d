// Calls through a virtual interface (issue #18): production's call-site data of the calling
// function tells which implementations ran from there and what they cost; the call node gets
// their sum instead of "?". Real libclang parses, in-memory production data.
#include <gtest/gtest.h>

#include <algorithm>

#include "server/analysis/ast_builder.h"
#include "server/analysis/testing/test_tu.h"

namespace perfhat::analysis {
namespace {

using testing::findFunction;
using testing::firstCall;
using testing::ranFrom;
using testing::TestTU;

constexpr const char* kVirtualSource = R"src(
namespace store {
struct Env {
  virtual ~Env() {}
  virtual long NowMicros() = 0;
  virtual void Sleep(int us) {}
};
long Stamp(Env* env) { return env->NowMicros(); }
void Nap(Env& env) { env.Env::Sleep(1); }
}  // namespace store
)src";

TEST(VirtualCallsTest, AVirtualCallIsMarkedAndAsksForTheImplementations) {
  TestTU t;
  t.code = kVirtualSource;
  auto built = t.build();
  const FunctionInfo* stamp = findFunction(built->unit, "store::Stamp(store::Env *)");
  ASSERT_NE(stamp, nullptr);
  const Node* call = firstCall(*stamp);
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->call.key, "store::Env::NowMicros()");
  EXPECT_TRUE(call->call.is_virtual);
  auto keys = referencedKeys(built->unit);
  EXPECT_NE(std::find(keys.begin(), keys.end(), "virtual:store::Env::NowMicros()"), keys.end());
  // `env.Env::Sleep(1)` names its function: no dispatch.
  const FunctionInfo* nap = findFunction(built->unit, "store::Nap(store::Env &)");
  ASSERT_NE(nap, nullptr);
  ASSERT_NE(firstCall(*nap), nullptr);
  EXPECT_FALSE(firstCall(*nap)->call.is_virtual);
}

TEST(VirtualCallsTest, TheCallGetsTheImplementationsThatRanFromItsFunction) {
  TestTU t;
  t.code = kVirtualSource;
  // Two implementations ran from Stamp; a third only from elsewhere.
  InMemoryFeedback view({
      ranFrom("store::PosixEnv::NowMicros()", 200, 10, "store::Stamp(store::Env *)"),
      ranFrom("test::FakeEnv::NowMicros()", 100, 30, "store::Stamp(store::Env *)"),
      ranFrom("test::SlowEnv::NowMicros()", 9000, 5, "test::Other()"),
  });
  SnapshotPtr snap = t.analyze(view);
  const FunctionInfo* stamp = findFunction(*snap, "store::Stamp(store::Env *)");
  ASSERT_NE(stamp, nullptr);
  const Node* call = firstCall(*stamp);
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->estimate.provenance, Provenance::Measured);
  EXPECT_NEAR(call->estimate.dist.mean_ns, (10 * 200.0 + 30 * 100.0) / 40, 1e-6);
  ASSERT_EQ(call->call.implementations.size(), 2u);
  std::vector<std::string> keys{call->call.implementations[0].key,
                                call->call.implementations[1].key};
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"store::PosixEnv::NowMicros()",
                                            "test::FakeEnv::NowMicros()"}));
}

TEST(VirtualCallsTest, WithoutCallSiteDataFromItsFunctionTheCallStaysUnknown) {
  TestTU t;
  t.code = kVirtualSource;
  InMemoryFeedback view({ranFrom("test::SlowEnv::NowMicros()", 9000, 5, "test::Other()")});
  SnapshotPtr snap = t.analyze(view);
  const FunctionInfo* stamp = findFunction(*snap, "store::Stamp(store::Env *)");
  ASSERT_NE(stamp, nullptr);
  const Node* call = firstCall(*stamp);
  ASSERT_NE(call, nullptr);
  EXPECT_TRUE(call->call.implementations.empty());
  EXPECT_NE(call->estimate.provenance, Provenance::Measured);
}

}  // namespace
}  // namespace perfhat::analysis
