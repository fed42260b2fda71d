// A macro probe's site is reported under its own function's symbol, not under the caller's it was
// inlined into (site_symbol.h).
#include "site_symbol.h"

#include <gtest/gtest.h>

#include "symbolize.h"

#include <cstdlib>
#include <vector>

// Internal linkage: not in the dynamic symbol table, so dladdr has no name for them and
// symbolize reads the program's own symbol table (linear scans first, sorted after a few lookups).
namespace {
[[gnu::noinline]] int symboltest_first(int x) { return x * 7 + 1; }
[[gnu::noinline]] int symboltest_second(int x) { return x * 11 + 3; }
}  // namespace

namespace perfhat::detail {
namespace {

TEST(SiteSymbol, BaseNameOfPrettyFunctionsAndDemangledSymbols) {
  EXPECT_EQ(function_base_name(
                "std::optional<agile::Burndown> agile::ReportService::burndown(int) const"),
            "burndown");
  EXPECT_EQ(function_base_name("agile::ReportService::burndown(int) const"), "burndown");
  EXPECT_EQ(function_base_name("double agile::{anonymous}::loggedOn(const std::vector<std::vector<"
                               "double> >&, size_t)"),
            "loggedOn");
  EXPECT_EQ(function_base_name("agile::(anonymous namespace)::loggedOn(std::vector<std::vector<"
                               "double, std::allocator<double> > > const&, unsigned long)"),
            "loggedOn");
  EXPECT_EQ(function_base_name("T ns::twice(T) [with T = int]"), "twice");
  EXPECT_EQ(function_base_name("int ns::twice<int>(int)"), "twice");
  EXPECT_EQ(function_base_name("std::function<void(int)> ns::make(int)"), "make");
  EXPECT_EQ(function_base_name("ns::Widget::~Widget()"), "~Widget");
  EXPECT_EQ(function_base_name("int ns::f()::Local::g(int) const"), "g");
  EXPECT_EQ(function_base_name("void ns::call(F) [with F = void(int)]"), "call");
  // Not compared: lambdas, operators, no parameter list.
  EXPECT_EQ(function_base_name("ns::f()::<lambda(int)>"), "");
  EXPECT_EQ(function_base_name("ns::f()::{lambda(int)#1}::operator()(int) const"), "");
  EXPECT_EQ(function_base_name("bool ns::operator==(const A&, const B&)"), "");
  EXPECT_EQ(function_base_name("main"), "");
}

TEST(SiteSymbol, AnInlinedFunctionIsNotFiledUnderItsCaller) {
  EXPECT_TRUE(symbol_is_another_function(
      "double agile::{anonymous}::loggedOn(const std::vector<std::vector<double> >&, size_t)",
      "agile::ReportService::burndown(int) const"));
  EXPECT_FALSE(symbol_is_another_function(
      "std::optional<agile::Burndown> agile::ReportService::burndown(int) const",
      "agile::ReportService::burndown(int) const"));
  EXPECT_FALSE(
      symbol_is_another_function("T ns::twice(T) [with T = int]", "int ns::twice<int>(int)"));
  // A lambda's probe keeps whatever symbol it found (its names do not compare).
  EXPECT_FALSE(symbol_is_another_function("ns::f()::<lambda(int)>",
                                          "ns::f()::{lambda(int)#1}::operator()(int) const"));
}

// Every lookup names the function that contains the address, before and after the object's
// symbols are sorted (the first lookups of a process scan them).
TEST(SiteSymbol, LocalFunctionsResolveTheSameBeforeAndAfterTheTableIsSorted) {
  const void* fns[] = {reinterpret_cast<const void*>(&symboltest_first),
                       reinterpret_cast<const void*>(&symboltest_second)};
  for (int round = 0; round < 20; ++round) {
    for (int f = 0; f < 2; ++f) {
      const symbolize::Symbol s = symbolize::resolve(static_cast<const char*>(fns[f]) + 1);
      EXPECT_EQ(s.start, fns[f]) << round;
      EXPECT_NE(s.demangled.find(f == 0 ? "symboltest_first" : "symboltest_second"),
                std::string::npos)
          << s.demangled;
    }
  }
}

// Many addresses at once (a carried selection's functions at start-up): one pass over the unsorted
// table names each as resolve() does, an exported function by dladdr, and nullptr nothing.
TEST(SiteSymbol, ManyAddressesResolveInOnePassAsEachAlone) {
  const std::vector<const void*> addrs = {
      static_cast<const char*>(reinterpret_cast<const void*>(&symboltest_second)) + 1,
      reinterpret_cast<const void*>(&symboltest_first), nullptr,
      reinterpret_cast<const void*>(&std::abort),
      static_cast<const char*>(reinterpret_cast<const void*>(&symboltest_first)) + 1};
  const std::vector<symbolize::Symbol> all = symbolize::resolve_all(addrs);
  ASSERT_EQ(all.size(), addrs.size());
  EXPECT_NE(all[0].demangled.find("symboltest_second"), std::string::npos) << all[0].demangled;
  EXPECT_NE(all[1].demangled.find("symboltest_first"), std::string::npos) << all[1].demangled;
  EXPECT_TRUE(all[2].mangled.empty());
  EXPECT_EQ(all[3].mangled, "abort");
  for (size_t i = 0; i < addrs.size(); ++i) {
    const symbolize::Symbol one = symbolize::resolve(addrs[i]);
    EXPECT_EQ(all[i].mangled, one.mangled) << i;
    EXPECT_EQ(all[i].demangled, one.demangled) << i;
    EXPECT_EQ(all[i].start, one.start) << i;
  }
}

}  // namespace
}  // namespace perfhat::detail
