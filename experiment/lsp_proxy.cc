#include "experiment/lsp_proxy.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "experiment/event_log.h"
#include "experiment/lsp_frames.h"

namespace perfhat::experiment {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxLoggedText = 4000;

std::string hoverText(const json& result) {
  if (result.is_string()) return result.get<std::string>();
  if (result.is_object() && result.contains("contents")) return hoverText(result["contents"]);
  if (result.is_object() && result.contains("value")) return hoverText(result["value"]);
  if (result.is_array()) {
    std::string s;
    for (const auto& part : result) {
      s += hoverText(part);
      s += '\n';
    }
    return s;
  }
  return "";
}

}  // namespace

void ProxyObserver::clientMessage(const json& m) {
  if (m.is_object() && m.value("method", "") == "textDocument/hover" && m.contains("id")) {
    pending_hovers.push_back(m["id"].dump());
  }
}

std::vector<json> ProxyObserver::serverMessage(const json& m) {
  std::vector<json> out;
  if (!m.is_object()) return out;
  if (m.value("method", "") == "textDocument/publishDiagnostics" && m.contains("params")) {
    const json& p = m["params"];
    const std::string uri = p.value("uri", "");
    for (const auto& d : p.value("diagnostics", json::array())) {
      if (!d.is_object() || !d.contains("code") || d["code"] != "perfhat.regression") continue;
      const std::string msg = d.value("message", "");
      std::string seen = uri;
      seen += '\n';
      seen += msg;
      if (std::find(seen_diagnostics.begin(), seen_diagnostics.end(), seen) !=
          seen_diagnostics.end()) {
        continue;
      }
      seen_diagnostics.push_back(seen);
      out.push_back(
          {{"type", "lsp_diagnostic"}, {"text", msg.substr(0, kMaxLoggedText)}, {"uri", uri}});
    }
  } else if (m.contains("id") && !m.contains("method")) {
    const auto it = std::find(pending_hovers.begin(), pending_hovers.end(), m["id"].dump());
    if (it == pending_hovers.end()) return out;
    pending_hovers.erase(it);
    const std::string text = m.contains("result") ? hoverText(m["result"]) : "";
    if (!text.empty()) {
      out.push_back({{"type", "lsp_hover"}, {"text", text.substr(0, kMaxLoggedText)}});
    }
  }
  return out;
}

int runLspProxy(const std::string& session_dir, const std::vector<std::string>& command) {
  if (command.empty()) throw std::invalid_argument("lsp-proxy: no server command after --");
  std::filesystem::create_directories(session_dir);
  std::signal(SIGPIPE, SIG_IGN);  // a closed editor end is a write error, not a kill
  const std::string log = (std::filesystem::path(session_dir) / "events.jsonl").string();
  int to_child[2], from_child[2];
  if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::dup2(to_child[0], STDIN_FILENO);
    ::dup2(from_child[1], STDOUT_FILENO);
    std::vector<char*> argv;
    argv.reserve(command.size() + 1);
    for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "lsp-proxy: cannot run %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);

  std::mutex mu;
  ProxyObserver observer;  // GUARDED_BY(mu)
  // Client → server. Detached: it may sit in read(stdin) after the server has exited.
  std::thread([&mu, &observer, fd = to_child[1]] {
    FrameReader in(STDIN_FILENO);
    std::string raw, body;
    while (in.next(raw, body)) {
      try {
        std::lock_guard lock(mu);
        observer.clientMessage(json::parse(body));
      } catch (const json::exception&) {
      }
      if (!writeAll(fd, raw)) break;
    }
    ::close(fd);  // the server sees EOF
  }).detach();

  // Server → client, logging what the participant was shown.
  FrameReader in(from_child[0]);
  std::string raw, body;
  while (in.next(raw, body)) {
    if (!writeAll(STDOUT_FILENO, raw)) break;
    try {
      std::vector<json> events;
      {
        std::lock_guard lock(mu);
        events = observer.serverMessage(json::parse(body));
      }
      for (auto& e : events) {
        Event ev{nowMs(), e["type"].get<std::string>(), "", "lsp", json::object()};
        ev.detail["text"] = e["text"];
        if (e.contains("uri")) ev.detail["uri"] = e["uri"];
        appendEvent(log, ev);
      }
    } catch (const std::exception& e) {  // logging never breaks the editor's session
      std::fprintf(stderr, "lsp-proxy: %s\n", e.what());
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::fflush(stdout);
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);  // the client thread may still read
}

}  // namespace perfhat::experiment
