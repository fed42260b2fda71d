// Class files from outside: every problem names the class and the field.
#include "plan/classes_file.h"

#include <gtest/gtest.h>

#include <string>

namespace perfhat::plan {
namespace {

std::string errorOf(const std::string& text) {
  ClassFile f = parseClassFile(text);
  EXPECT_FALSE(f.ok()) << text;
  EXPECT_TRUE(f.classes.empty());
  return f.error;
}

TEST(ClassFile, ReadsTheIssueExampleAndDefaults) {
  ClassFile f = parseClassFile(
      R"([{"name":"file","frequency_hz":359,"duty_ratio":0.30,"weight":2},
          {"name":"window","frequency_hz":189.5,"duty_ratio":0,"min_rate_hz":10}])");
  ASSERT_TRUE(f.ok()) << f.error;
  ASSERT_EQ(f.classes.size(), 2u);
  EXPECT_EQ(f.classes[0].name, "file");
  EXPECT_EQ(f.classes[0].frequency_hz, 359);
  EXPECT_EQ(f.classes[0].duty_ratio, 0.30);
  EXPECT_EQ(f.classes[0].weight, 2);
  EXPECT_EQ(f.classes[1].weight, 1);  // default
  EXPECT_EQ(f.classes[1].min_rate_hz, 10);
}

TEST(ClassFile, AcceptsAnObjectWithClasses) {
  ClassFile f = parseClassFile(R"({"classes":[{"name":"a","frequency_hz":1,"duty_ratio":0.5}]})");
  ASSERT_TRUE(f.ok()) << f.error;
  EXPECT_EQ(f.classes.size(), 1u);
}

TEST(ClassFile, ErrorsNameTheClassAndTheField) {
  EXPECT_EQ(errorOf(R"([{"name":"a","frequency_hz":1,"duty_ratio":0.1},
                        {"name":"font","duty_ratio":0.1}])"),
            "class \"font\" (#2): field \"frequency_hz\": missing");
  EXPECT_EQ(errorOf(R"([{"name":"file","frequency_hz":-3,"duty_ratio":0.1}])"),
            "class \"file\" (#1): field \"frequency_hz\": must be in (0, 1e9] Hz, got -3");
  EXPECT_EQ(errorOf(R"([{"name":"file","frequency_hz":3,"duty_ratio":1.5}])"),
            "class \"file\" (#1): field \"duty_ratio\": must be in [0, 1], got 1.5");
  EXPECT_EQ(errorOf(R"([{"name":"file","frequency_hz":3,"duty_ratio":0.5,"weight":-1}])"),
            "class \"file\" (#1): field \"weight\": must be in [0, 1e9], got -1");
  EXPECT_EQ(errorOf(R"([{"name":"file","frequency_hz":3,"duty_ratio":"0.5"}])"),
            "class \"file\" (#1): field \"duty_ratio\": must be a number, got string");
  EXPECT_EQ(errorOf(R"([{"frequency_hz":3,"duty_ratio":0.5}])"),
            "class #1: field \"name\": missing");
  EXPECT_EQ(errorOf(R"([{"name":"x","frequency_hz":3,"duty_ratio":0.5,"dutty":1}])"),
            "class \"x\" (#1): field \"dutty\": unknown field");
  EXPECT_EQ(errorOf(R"([{"name":"x","frequency_hz":3,"duty_ratio":0.5,"min_rate_hz":4}])"),
            "class \"x\" (#1): field \"min_rate_hz\": must be in [0, frequency_hz], got 4");
  EXPECT_EQ(errorOf(R"([{"name":"x","frequency_hz":0,"duty_ratio":0.5}])"),
            "class \"x\" (#1): field \"frequency_hz\": must be greater than 0");
}

TEST(ClassFile, AbsurdAndNonFiniteNumbers) {
  EXPECT_NE(errorOf(R"([{"name":"x","frequency_hz":1e12,"duty_ratio":0.5}])")
                .find("class \"x\" (#1): field \"frequency_hz\""),
            std::string::npos);
  // 1e400 overflows a double: either the parser refuses it or it arrives as infinity.
  std::string e = errorOf(R"([{"name":"x","frequency_hz":1e400,"duty_ratio":0.5}])");
  EXPECT_TRUE(e.find("frequency_hz") != std::string::npos || e.find("JSON") != std::string::npos)
      << e;
  EXPECT_NE(errorOf(R"([{"name":"x","frequency_hz":NaN,"duty_ratio":0.5}])").find("class file"),
            std::string::npos);
  EXPECT_EQ(errorOf(R"([{"name":"x","frequency_hz":1,"duty_ratio":0.5,"weight":1e10}])"),
            "class \"x\" (#1): field \"weight\": must be in [0, 1e9], got 10000000000");
}

TEST(ClassFile, DuplicateNames) {
  EXPECT_EQ(errorOf(R"([{"name":"a","frequency_hz":1,"duty_ratio":0.1},
                        {"name":"a","frequency_hz":2,"duty_ratio":0.1}])"),
            "class \"a\" (#2): field \"name\": duplicate class name");
}

TEST(ClassFile, NotJsonDeepNestingAndWrongShapes) {
  EXPECT_EQ(errorOf("name,frequency\nfile,359\n").rfind("class file: ", 0), 0u);
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_NE(errorOf(deep).find("nested deeper"), std::string::npos);
  EXPECT_NE(errorOf("[]").find("no classes"), std::string::npos);
  EXPECT_NE(errorOf("42").find("expected an array"), std::string::npos);
  EXPECT_NE(errorOf("[3]").find("class #1"), std::string::npos);
}

TEST(ClassFile, TooManyClasses) {
  std::string text = "[";
  for (std::size_t i = 0; i <= kMaxClasses; ++i)
    text += (i ? "," : "") + std::string(R"({"name":"c)") + std::to_string(i) +
            R"(","frequency_hz":1,"duty_ratio":0})";
  text += "]";
  EXPECT_NE(errorOf(text).find("at most"), std::string::npos);
}

TEST(ClassFile, MissingFile) {
  ClassFile f = readClassFile("/nonexistent/classes.json");
  EXPECT_NE(f.error.find("cannot open /nonexistent/classes.json"), std::string::npos);
}

}  // namespace
}  // namespace perfhat::plan
