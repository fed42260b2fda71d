#include "server/analysis/compile_db.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/json_parse.h"

#ifndef PERFHAT_CLANG_RESOURCE_DIR
#define PERFHAT_CLANG_RESOURCE_DIR ""
#endif

namespace perfhat::analysis {
namespace fs = std::filesystem;

namespace {

std::string absoluteNormal(const std::string& path, const std::string& base = "") {
  std::error_code ec;
  fs::path p(path);
  if (p.is_relative() && !base.empty()) p = fs::path(base) / p;
  fs::path abs = fs::absolute(p, ec);
  return (ec ? p : abs).lexically_normal().string();
}

// Keeps the flags that matter for parsing; drops the compiler, the input, outputs and
// dependency-file generation.
std::vector<std::string> cleanArgs(const std::vector<std::string>& raw, const std::string& file,
                                   const std::string& directory) {
  std::vector<std::string> out;
  std::string file_abs = absoluteNormal(file, directory);
  for (size_t i = 1; i < raw.size(); ++i) {
    const std::string& a = raw[i];
    if (a == "-c" || a == "-MD" || a == "-MMD" || a == "-MP") continue;
    if (a == "-o" || a == "-MF" || a == "-MT" || a == "-MQ") {
      ++i;
      continue;
    }
    if (a.rfind("-o", 0) == 0 && a.size() > 2 && a[2] != 'p') continue;  // -ofoo.o
    if (!a.empty() && a[0] != '-' && absoluteNormal(a, directory) == file_abs) continue;
    out.push_back(a);
  }
  return out;
}

// The key of the sibling index: a file's directory and extension.
std::string dirAndExtension(const std::string& file_abs) {
  const fs::path f(file_abs);
  return f.parent_path().string() + '\0' + f.extension().string();
}

}  // namespace

std::vector<std::string> splitCommandLine(const std::string& command) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < command.size(); ++i) {
    char c = command[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < command.size())
        cur.push_back(command[++i]);
      else
        cur.push_back(c);
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < command.size()) {
      cur.push_back(command[++i]);
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) out.push_back(cur);
      cur.clear();
      in_word = false;
    } else {
      cur.push_back(c);
      in_word = true;
    }
  }
  if (in_word) out.push_back(cur);
  return out;
}

std::string findCompileDatabase(const std::string& file, const std::string& configured) {
  std::error_code ec;
  if (!configured.empty()) {
    fs::path p(configured);
    if (fs::is_directory(p, ec)) p /= "compile_commands.json";
    return fs::is_regular_file(p, ec) ? absoluteNormal(p.string()) : "";
  }
  fs::path dir = fs::path(absoluteNormal(file)).parent_path();
  for (int depth = 0; depth < 64 && !dir.empty(); ++depth) {
    for (const fs::path& candidate :
         {dir / "compile_commands.json", dir / "build" / "compile_commands.json"})
      if (fs::is_regular_file(candidate, ec)) return candidate.string();
    if (dir == dir.root_path()) break;
    dir = dir.parent_path();
  }
  return "";
}

CompileDatabase CompileDatabase::parse(std::string_view json_text, std::string path) {
  CompileDatabase db;
  db.path_ = std::move(path);
  JsonParse parsed = parseJson(json_text);
  const nlohmann::json& j = parsed.value;
  if (!parsed.ok() || !j.is_array()) {
    db.error_ = db.path_ + ": not a JSON array of compile commands" +
                (parsed.ok() ? std::string() : " (" + parsed.error + ")");
    return db;
  }
  for (const auto& e : j) {
    if (!e.is_object()) continue;
    auto file = e.find("file");
    if (file == e.end() || !file->is_string()) continue;
    Entry entry;
    auto directory = e.find("directory");
    if (directory != e.end() && directory->is_string())
      entry.directory = directory->get<std::string>();
    entry.file = absoluteNormal(file->get<std::string>(), entry.directory);
    auto arguments = e.find("arguments");
    auto command = e.find("command");
    if (arguments != e.end() && arguments->is_array()) {
      for (const auto& a : *arguments)
        if (a.is_string()) entry.raw.push_back(a.get<std::string>());
    } else if (command != e.end() && command->is_string()) {
      entry.raw = splitCommandLine(command->get<std::string>());
    }
    if (entry.raw.empty()) continue;
    const size_t index = db.entries_.size();
    db.exact_.emplace(entry.file, index);  // the first entry of a file wins
    db.by_dir_and_ext_.emplace(dirAndExtension(entry.file), index);
    db.by_ext_.emplace(fs::path(entry.file).extension().string(), index);
    db.entries_.push_back(std::move(entry));
  }
  return db;
}

CompileDatabase CompileDatabase::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    CompileDatabase db;
    db.path_ = path;
    db.error_ = path + ": cannot be read";
    return db;
  }
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

std::vector<std::string> CompileDatabase::files() const {
  std::vector<std::string> out;
  out.reserve(exact_.size());
  for (const auto& [file, index] : exact_) out.push_back(file);
  std::sort(out.begin(), out.end());
  return out;
}

const CompileDatabase::Entry* CompileDatabase::siblingOf(const std::string& file_abs) const {
  if (auto it = by_dir_and_ext_.find(dirAndExtension(file_abs)); it != by_dir_and_ext_.end())
    return &entries_[it->second];
  if (auto it = by_ext_.find(fs::path(file_abs).extension().string()); it != by_ext_.end())
    return &entries_[it->second];
  return entries_.empty() ? nullptr : &entries_[0];
}

CompileCommand CompileDatabase::commandFor(const std::string& file) const {
  CompileCommand cmd;
  cmd.database = path_;
  cmd.error = error_;
  const std::string file_abs = absoluteNormal(file);
  const Entry* chosen = nullptr;
  if (auto it = exact_.find(file_abs); it != exact_.end()) {
    chosen = &entries_[it->second];
    cmd.source = CompileCommand::Source::Exact;
  } else if ((chosen = siblingOf(file_abs))) {
    cmd.source = CompileCommand::Source::Sibling;
  }
  if (!chosen) {
    if (cmd.error.empty()) cmd.error = path_ + ": no usable entry";
    return cmd;
  }
  cmd.args = cleanArgs(chosen->raw, chosen->file, chosen->directory);
  cmd.directory = chosen->directory;
  if (!cmd.directory.empty()) cmd.args.push_back("-working-directory=" + cmd.directory);
  cmd.missing = false;
  // Borrowed flags of a .cc entry for a header: clang would otherwise parse it as C.
  const std::string ext = fs::path(file_abs).extension().string();
  if (fs::path(chosen->file).extension() != ext &&
      (ext == ".h" || ext == ".hpp" || ext == ".hh" || ext == ".hxx"))
    cmd.args.push_back("-xc++");
  return cmd;
}

namespace {

// Parsed databases by path, each with the size and modification time it was read at.
class DatabaseCache {
 public:
  std::shared_ptr<const CompileDatabase> get(const std::string& path) {
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    const auto mtime = ec ? fs::file_time_type() : fs::last_write_time(path, ec);
    if (!ec) {
      std::lock_guard lock(mu_);
      auto it = cached_.find(path);
      if (it != cached_.end() && it->second.size == size && it->second.mtime == mtime)
        return it->second.db;
    }
    auto db = std::make_shared<const CompileDatabase>(CompileDatabase::load(path));
    // A file written within the last seconds may be written again within the same timestamp
    // tick with the same size; such a read is used but not kept.
    const bool settled = !ec && fs::file_time_type::clock::now() - mtime > kSettle;
    std::lock_guard lock(mu_);
    if (settled) {
      if (cached_.size() >= kMaxDatabases && !cached_.count(path)) cached_.clear();
      cached_[path] = Cached{size, mtime, db};
    } else {
      cached_.erase(path);
    }
    return db;
  }

 private:
  static constexpr auto kSettle = std::chrono::seconds(2);
  static constexpr size_t kMaxDatabases = 16;  // a workspace has a few; bounds odd setups
  struct Cached {
    std::uintmax_t size;
    fs::file_time_type mtime;
    std::shared_ptr<const CompileDatabase> db;
  };
  std::mutex mu_;
  std::unordered_map<std::string, Cached> cached_;
};

}  // namespace

std::shared_ptr<const CompileDatabase> cachedCompileDatabase(const std::string& path) {
  static DatabaseCache cache;
  return cache.get(path);
}

CompileCommand compileCommandFor(const std::string& file, const std::string& configured,
                                 const std::vector<std::string>& fallback_flags) {
  CompileCommand cmd;
  const std::string database = findCompileDatabase(file, configured);
  if (!database.empty()) cmd = cachedCompileDatabase(database)->commandFor(file);
  if (cmd.missing) {
    cmd.source = CompileCommand::Source::Fallback;
    cmd.args = fallback_flags;
    cmd.args.push_back("-I" + fs::path(absoluteNormal(file)).parent_path().string());
  }
  std::string resource_dir = PERFHAT_CLANG_RESOURCE_DIR;
  if (!resource_dir.empty()) {
    cmd.args.push_back("-resource-dir");
    cmd.args.push_back(resource_dir);
  }
  return cmd;
}

}  // namespace perfhat::analysis
