// Annotated test sources in the style of clangd's Annotations: `$name^` marks a point,
// `[[text]]` or `$name[[text]]` a range. code() is the text without the markers; positions are
// 0-based lines and byte columns of that text, as in Snapshot.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "server/analysis/snapshot.h"

namespace perfhat::analysis::testing {

class Annotations {
 public:
  explicit Annotations(std::string_view annotated);
  const std::string& code() const { return code_; }
  // Throws std::out_of_range naming the marker when it does not exist.
  Position point(const std::string& name = "") const;
  Range range(const std::string& name = "") const;
  std::vector<Range> ranges(const std::string& name = "") const;

 private:
  std::string code_;
  std::map<std::string, std::vector<Position>> points_;
  std::map<std::string, std::vector<Range>> ranges_;
};

}  // namespace perfhat::analysis::testing
