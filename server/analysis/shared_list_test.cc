#include "server/analysis/shared_list.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace perfhat::analysis {
namespace {

TEST(SharedList, AListSharingAnElementWithAnotherWritesItsOwnCopy) {
  SharedList<std::string> a{"one", "two"};
  SharedList<std::string> b;
  b.push_back(a.shared(0));
  b.push_back(std::string("three"));
  ASSERT_EQ(&std::as_const(a)[0], &std::as_const(b)[0]) << "held once by both";
  b.mut(0) += "!";
  EXPECT_EQ(std::as_const(a)[0], "one") << "the other holder's element is unchanged";
  EXPECT_EQ(std::as_const(b)[0], "one!");
  // An element nobody else holds is written in place.
  const std::string* own = &std::as_const(b)[1];
  b[1] += "?";
  EXPECT_EQ(&std::as_const(b)[1], own);
  EXPECT_EQ(std::as_const(b)[1], "three?");
}

TEST(SharedList, ACopiedListSharesUntilWritten) {
  SharedList<std::string> a{"x", "y", "z"};
  const SharedList<std::string> snapshot = a;
  a.back() = "w";
  EXPECT_EQ(std::vector<std::string>(snapshot.begin(), snapshot.end()),
            (std::vector<std::string>{"x", "y", "z"}));
  EXPECT_EQ(std::vector<std::string>(a.begin(), a.end()),
            (std::vector<std::string>{"x", "y", "w"}));
  EXPECT_EQ(&snapshot.front(), &std::as_const(a).front());
  EXPECT_EQ(std::find(snapshot.begin(), snapshot.end(), "z") - snapshot.begin(), 2);
}

}  // namespace
}  // namespace perfhat::analysis
