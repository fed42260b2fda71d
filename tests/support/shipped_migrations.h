// The schema migrations the store ships, read from store/schema.cc's source (its R"SQL(...)SQL"
// literals, in order), so tests follow every new migration without a copy of its text: applying
// them on PostgreSQL, or building a store of an older schema version to migrate.
#pragma once

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace perfhat::testing {

inline std::vector<std::string> shippedMigrations() {
  std::ifstream in(std::string(PERFHAT_SOURCE_DIR) + "/feedback-handler/store/schema.cc");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string src = ss.str();
  std::vector<std::string> out;
  static const std::regex kRaw(R"re(R"SQL\(([\s\S]*?)\)SQL")re");
  for (std::sregex_iterator it(src.begin(), src.end(), kRaw), end; it != end; ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

}  // namespace perfhat::testing
