#include "server/analysis/options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace perfhat::analysis {
namespace {

using ::testing::HasSubstr;

TEST(AnalysisOptionsTest, DefaultsAreSafe) {
  AnalysisOptions o = parseAnalysisOptions("{}");
  EXPECT_EQ(o.default_loop_iterations, 10);
  EXPECT_EQ(o.branch_mode, BranchMode::Mean);
  EXPECT_TRUE(o.rules.empty());
  EXPECT_EQ(o.fallback_flags, (std::vector<std::string>{"-std=c++20", "-xc++"}));
}

TEST(AnalysisOptionsTest, RoundTrip) {
  AnalysisOptions o;
  o.default_loop_iterations = 25;
  o.branch_mode = BranchMode::Worst;
  o.rules = {{"GET /tasks", "agile::Api::listTasks(...)", ""}, {"job", "", "batch::.*"}};
  o.workspace_root = "/src/proj";
  o.fallback_flags = {"-std=c++17"};
  o.compile_commands = "/src/proj/build";
  o.show_do_while_zero = true;
  nlohmann::json j = o;
  EXPECT_EQ(j["branch_mode"], "worst");
  EXPECT_EQ(parseAnalysisOptions(j.dump()), o);
}

TEST(AnalysisOptionsTest, ErrorsNameTheField) {
  auto error = [](const char* text) {
    try {
      parseAnalysisOptions(text);
    } catch (const OptionsError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(error("{"), HasSubstr("malformed JSON"));
  EXPECT_THAT(error("[]"), HasSubstr("expected an object"));
  EXPECT_THAT(error(R"({"default_loop_iterations": -3})"), HasSubstr("default_loop_iterations"));
  EXPECT_THAT(error(R"({"default_loop_iterations": "ten"})"), HasSubstr("default_loop_iterations"));
  EXPECT_THAT(error(R"({"branch_mode": "best"})"), HasSubstr("branch_mode"));
  EXPECT_THAT(error(R"({"rules": {}})"), HasSubstr("rules"));
  EXPECT_THAT(error(R"j({"rules": [{"function": "f()"}]})j"), HasSubstr("rule.span"));
  EXPECT_THAT(error(R"({"rules": [{"span": "x"}]})"), HasSubstr("exactly one"));
  EXPECT_THAT(error(R"({"rules": [{"span": "x", "function_regex": "("}]})"),
              HasSubstr("function_regex"));
  // RE2 has no back-references: a clear error, not a pattern that silently means something else.
  EXPECT_THAT(error(R"j({"rules": [{"span": "a", "function": "f()"},
                                     {"span": "x", "function_regex": "(x)\\1"}]})j"),
              HasSubstr("rules[1]: rule.function_regex: invalid regular expression: invalid "
                        "escape sequence: \\1"));
  EXPECT_THAT(error(R"({"rules": [{"span": "x", "function_regex": "(x)\\1"}]})"),
              HasSubstr("rule.function_regex: invalid regular expression: invalid escape"));
  // Inputs that overflowed std::regex (found by fuzzing) now compile, or get RE2's error.
  const std::string long_regex =
      R"({"rules": [{"span": "x", "function_regex": ")" + std::string(100000, 'a') + R"("}]})";
  EXPECT_EQ(error(long_regex.c_str()), "no error");
  const std::string deep_regex = R"({"rules": [{"span": "x", "function_regex": ")" +
                                 std::string(100000, '(') + "a" + std::string(100000, ')') +
                                 R"("}]})";
  EXPECT_EQ(error(deep_regex.c_str()), "no error");
  // A count RE2 cannot read is a literal `{…}` (Perl's rule); one over 1000 is refused.
  EXPECT_EQ(error(R"({"rules": [{"span": "x", "function_regex": "a{1,99999999999}"}]})"),
            "no error");
  EXPECT_THAT(
      error(R"({"rules": [{"span": "x", "function_regex": "a{1,2000}"}]})"),
      HasSubstr("rule.function_regex: invalid regular expression: invalid repetition size"));
  // Beyond the memory bound: refused with RE2's reason.
  EXPECT_THAT(error(R"({"rules": [{"span": "x", "function_regex": "\\pL{1000}"}]})"),
              HasSubstr("rule.function_regex: invalid regular expression: pattern too large"));
  EXPECT_EQ(
      error(R"({"rules": [{"span": "x", "function_regex": "v1234567::f\\(int\\)|a{2,30}"}]})"),
      "no error");
  EXPECT_THAT(error(R"({"fallback_flags": [1]})"), HasSubstr("fallback_flags"));
  EXPECT_THAT(error(R"({"workspace_root": 5})"), HasSubstr("workspace_root"));
}

}  // namespace
}  // namespace perfhat::analysis
