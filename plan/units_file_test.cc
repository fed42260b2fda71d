#include "plan/units_file.h"

#include <gtest/gtest.h>

namespace perfhat::plan {
namespace {

TEST(UnitsFile, OneKeyALineNeverSplit) {
  UnitsFile f = parseUnits(
      "# inventory\n"
      "agile::BacklogService::storyPoints(const agile::Story &) const\r\n"
      "\n"
      "   std::map<int, std::pair<a, b>> ns::g(int, char)  \n"
      "agile::BacklogService::storyPoints(const agile::Story &) const\n"
      "last");
  ASSERT_TRUE(f.ok()) << f.error;
  EXPECT_EQ(f.units, (std::vector<std::string>{
                         "agile::BacklogService::storyPoints(const agile::Story &) const",
                         "std::map<int, std::pair<a, b>> ns::g(int, char)", "last"}));
}

TEST(UnitsFile, Errors) {
  EXPECT_NE(parseUnits(std::string("abc\0def\n", 8)).error.find("binary"), std::string::npos);
  EXPECT_NE(parseUnits("# only a comment\n\n").error.find("no function keys"), std::string::npos);
  EXPECT_NE(parseUnits("ok\n" + std::string(kMaxUnitKeyBytes + 1, 'x')).error.find("line 2"),
            std::string::npos);
  EXPECT_NE(readUnitsFile("/nonexistent/units").error.find("cannot open"), std::string::npos);
  EXPECT_NE(readUnitsFile("/").error.find("is a directory"), std::string::npos);
}

}  // namespace
}  // namespace perfhat::plan
