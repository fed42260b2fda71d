// A small workspace on disk for the index tests: files, a compile_commands.json, cleanup.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace perfhat::index::testing {

class Workspace {
 public:
  Workspace() {
    char tmpl[] = "/tmp/perfhat-index-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~Workspace() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string path(const std::string& rel) const { return dir_ + "/" + rel; }
  const std::string& dir() const { return dir_; }
  void write(const std::string& rel, const std::string& text) const {
    std::filesystem::create_directories(std::filesystem::path(path(rel)).parent_path());
    std::ofstream(path(rel), std::ios::binary | std::ios::trunc) << text;
  }
  // compile_commands.json with one entry per source, all with `flags`.
  std::string database(const std::vector<std::string>& sources,
                       const std::string& flags = "-std=c++20") const {
    nlohmann::json db = nlohmann::json::array();
    for (const auto& s : sources)
      db.push_back(
          {{"directory", dir_}, {"file", path(s)}, {"command", "c++ " + flags + " -c " + s}});
    write("compile_commands.json", db.dump());
    return path("compile_commands.json");
  }

 private:
  std::string dir_;
};

}  // namespace perfhat::index::testing
