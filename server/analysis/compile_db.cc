#include "server/analysis/compile_db.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

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

struct Entry {
  std::string file;
  std::string directory;
  std::vector<std::string> raw;
};

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

CompileCommand compileCommandFor(const std::string& file, const std::string& configured,
                                 const std::vector<std::string>& fallback_flags) {
  CompileCommand cmd;
  std::string file_abs = absoluteNormal(file);
  cmd.database = findCompileDatabase(file, configured);
  if (!cmd.database.empty()) {
    std::ifstream in(cmd.database);
    std::stringstream ss;
    ss << in.rdbuf();
    nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
    std::vector<Entry> entries;
    if (j.is_discarded() || !j.is_array()) {
      cmd.error = cmd.database + ": not a JSON array of compile commands";
    } else {
      for (const auto& e : j) {
        if (!e.is_object() || !e.contains("file") || !e["file"].is_string()) continue;
        Entry entry;
        entry.directory = e.value("directory", std::string());
        if (!e.value("directory", nlohmann::json()).is_string()) entry.directory.clear();
        entry.file = absoluteNormal(e["file"].get<std::string>(), entry.directory);
        if (e.contains("arguments") && e["arguments"].is_array()) {
          for (const auto& a : e["arguments"])
            if (a.is_string()) entry.raw.push_back(a.get<std::string>());
        } else if (e.contains("command") && e["command"].is_string()) {
          entry.raw = splitCommandLine(e["command"].get<std::string>());
        }
        if (!entry.raw.empty()) entries.push_back(std::move(entry));
      }
    }
    const Entry* chosen = nullptr;
    for (const auto& e : entries)
      if (e.file == file_abs) {
        chosen = &e;
        cmd.source = CompileCommand::Source::Exact;
        break;
      }
    if (!chosen) {
      fs::path f(file_abs);
      const Entry* same_dir_ext = nullptr;
      const Entry* same_ext = nullptr;
      for (const auto& e : entries) {
        fs::path ef(e.file);
        if (ef.extension() != f.extension()) continue;
        if (!same_dir_ext && ef.parent_path() == f.parent_path()) same_dir_ext = &e;
        if (!same_ext) same_ext = &e;
      }
      chosen = same_dir_ext ? same_dir_ext
               : same_ext   ? same_ext
                            : (entries.empty() ? nullptr : &entries[0]);
      if (chosen) cmd.source = CompileCommand::Source::Sibling;
    }
    if (chosen) {
      cmd.args = cleanArgs(chosen->raw, chosen->file, chosen->directory);
      cmd.directory = chosen->directory;
      if (!cmd.directory.empty()) cmd.args.push_back("-working-directory=" + cmd.directory);
      cmd.missing = false;
      // Borrowed flags of a .cc entry for a header: clang would otherwise parse it as C.
      std::string ext = fs::path(file_abs).extension().string();
      if (fs::path(chosen->file).extension() != ext &&
          (ext == ".h" || ext == ".hpp" || ext == ".hh" || ext == ".hxx"))
        cmd.args.push_back("-xc++");
    } else if (cmd.error.empty()) {
      cmd.error = cmd.database + ": no usable entry";
    }
  }
  if (cmd.missing) {
    cmd.source = CompileCommand::Source::Fallback;
    cmd.args = fallback_flags;
    cmd.args.push_back("-I" + fs::path(file_abs).parent_path().string());
  }
  std::string resource_dir = PERFHAT_CLANG_RESOURCE_DIR;
  if (!resource_dir.empty()) {
    cmd.args.push_back("-resource-dir");
    cmd.args.push_back(resource_dir);
  }
  return cmd;
}

}  // namespace perfhat::analysis
