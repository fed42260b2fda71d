// batchGet by name: a template's definition, or one overload, gets every stored key of its
// qualified name (the language server attaches instantiations to the template's definition).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "common/test_units.h"
#include "feedback-handler/store/store.h"

namespace perfhat::handler {
namespace {

using perfhat::test_units::kNow;

class StoreNamesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("perfhat-store-names-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  StoreOptions opts() {
    StoreOptions o;
    o.path = (dir_ / "s.sqlite").string();
    o.now_ns = [] { return kNow; };
    return o;
  }
  static void add(Batch& b, const std::string& key, double v, int n) {
    AggValue& a = b.aggregates[AggKey{AggKind::kFunction, key, "", kNow / kBucketNs - 1, "svc",
                                      "1.0", "", ""}];
    for (int i = 0; i < n; ++i) a.sketch.add(v, 1);
    b.functions[key].last_seen_ns = kNow - kBucketNs;
  }
  static std::vector<std::string> keys(const BatchGetResponse& r) {
    std::vector<std::string> out;
    for (const auto& it : r.items) out.push_back(it.key);
    std::sort(out.begin(), out.end());
    return out;
  }
  std::filesystem::path dir_;
};

TEST_F(StoreNamesTest, ATemplateDefinitionGetsEveryInstantiationThatRan) {
  Store s(opts());
  Batch b;
  add(b, "ns::Queue<int>::push(const int &)", 100, 3);
  add(b, "ns::Queue<std::string>::push(const std::string &)", 900, 2);
  add(b, "ns::Stack<int>::push(const int &)", 50, 1);
  s.write(b);
  BatchGetRequest req;
  req.keys = {"ns::Queue<E>::push(const E &)", "ns::absent(int)"};
  BatchGetResponse r = s.batchGet(req);
  EXPECT_EQ(keys(r),
            (std::vector<std::string>{"ns::Queue<int>::push(const int &)",
                                      "ns::Queue<std::string>::push(const std::string &)"}));
  EXPECT_EQ(r.missing, std::vector<std::string>{"ns::absent(int)"});
  for (const auto& it : r.items) ASSERT_TRUE(it.stats.has_value()) << it.key;
  // A key written later is found by name too (the name index follows the table).
  Batch later;
  add(later, "ns::Queue<long>::push(const long &)", 10, 1);
  s.write(later);
  EXPECT_EQ(keys(s.batchGet(req)).size(), 3u);
}

TEST_F(StoreNamesTest, AnExactKeyStillAnswersAloneAndRepeatsAreAnsweredOnce) {
  Store s(opts());
  Batch b;
  add(b, "ns::f(int)", 100, 1);
  add(b, "ns::f(double)", 200, 1);
  add(b, "ns::g<int>(int)", 300, 1);
  s.write(b);
  BatchGetRequest req;
  req.keys = {"ns::f(int)", "ns::g<T>(T)", "ns::g<U>(U)", "ns::f(long)"};
  BatchGetResponse r = s.batchGet(req);
  // f(int) exactly; g<int> once although asked twice by name; f(long) by name: f(double) (f(int)
  // is already in the answer).
  EXPECT_EQ(keys(r), (std::vector<std::string>{"ns::f(double)", "ns::f(int)", "ns::g<int>(int)"}));
  EXPECT_TRUE(r.missing.empty()) << ::testing::PrintToString(r.missing);
  BatchGetRequest one;
  one.keys = {"ns::f(long)"};
  EXPECT_EQ(keys(s.batchGet(one)).size(), 2u);
}

TEST_F(StoreNamesTest, AVirtualKeyGetsEveryImplementationOfTheMember) {
  Store s(opts());
  Batch b;
  add(b, "store::PosixEnv::NowMicros()", 100, 3);
  add(b, "test::FakeEnv::NowMicros()", 50, 2);
  add(b, "store::PosixEnv::Sleep(int)", 10, 1);
  add(b, "NowMicros()", 10, 1);  // a free function of that name is no implementation
  s.write(b);
  BatchGetRequest req;
  req.keys = {"virtual:store::Env::NowMicros()"};
  EXPECT_EQ(keys(s.batchGet(req)), (std::vector<std::string>{"store::PosixEnv::NowMicros()",
                                                             "test::FakeEnv::NowMicros()"}));
}

// A call through a function pointer: the functions production ran from the caller, whatever the
// runtime's spelling of the caller (`Slice const &`), and none ran only from others.
TEST_F(StoreNamesTest, ACalleesKeyGetsEveryFunctionThatRanFromTheCaller) {
  Store s(opts());
  Batch b;
  auto ranFrom = [&](const std::string& key, const std::string& caller) {
    add(b, key, 100, 2);
    AggValue& c = b.aggregates[AggKey{AggKind::kCallSite, key, caller, kNow / kBucketNs - 1, "svc",
                                      "1.0", "", ""}];
    c.sketch.add(100, 2);
  };
  ranFrom("app::fast(int)", "app::apply(int (*)(int), store::Slice const&)");
  ranFrom("app::slow(int)", "app::apply(int (*)(int), const store::Slice &)");
  ranFrom("app::other(int)", "app::elsewhere()");
  s.write(b);
  BatchGetRequest req;
  req.keys = {"callees:app::apply(int (*)(int), const store::Slice &)", "callees:app::nobody()"};
  BatchGetResponse r = s.batchGet(req);
  EXPECT_EQ(keys(r), (std::vector<std::string>{"app::fast(int)", "app::slow(int)"}));
  for (const auto& it : r.items) EXPECT_FALSE(it.callsites.empty()) << it.key;
}

}  // namespace
}  // namespace perfhat::handler
