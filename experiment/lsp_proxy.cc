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

namespace perfhat::experiment {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxHeaderBytes = 8192;
constexpr size_t kMaxBodyBytes = 256u << 20;
constexpr size_t kMaxLoggedText = 4000;

// Buffered reader of Content-Length framed messages from a file descriptor.
class FrameReader {
 public:
  explicit FrameReader(int fd) : fd_(fd) {}
  // The whole frame (headers and body) in `raw`, the body in `body`; false at EOF or on a
  // malformed header (the stream cannot be resynchronised then).
  bool next(std::string& raw, std::string& body) {
    raw.clear();
    size_t length = 0;
    bool have_length = false;
    for (;;) {  // header lines
      std::string line;
      for (;;) {
        int c = get();
        if (c < 0) return false;
        raw += static_cast<char>(c);
        if (c == '\n') break;
        line += static_cast<char>(c);
        if (raw.size() > kMaxHeaderBytes) return false;
      }
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) break;
      static const char kLen[] = "content-length:";
      std::string lower = line;
      std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
      if (lower.rfind(kLen, 0) == 0) {
        length = std::strtoull(line.c_str() + sizeof kLen - 1, nullptr, 10);
        have_length = true;
      }
    }
    if (!have_length || length > kMaxBodyBytes) return false;
    body.clear();
    while (body.size() < length) {
      if (pos_ == len_ && !fill()) return false;
      const size_t n = std::min(length - body.size(), len_ - pos_);
      body.append(buf_ + pos_, n);
      pos_ += n;
    }
    raw += body;
    return true;
  }

 private:
  bool fill() {
    ssize_t n;
    do n = ::read(fd_, buf_, sizeof buf_);
    while (n < 0 && errno == EINTR);
    if (n <= 0) return false;
    pos_ = 0;
    len_ = static_cast<size_t>(n);
    return true;
  }
  int get() {
    if (pos_ == len_ && !fill()) return -1;
    return static_cast<unsigned char>(buf_[pos_++]);
  }
  int fd_;
  char buf_[65536];
  size_t pos_ = 0, len_ = 0;
};

bool writeAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

std::string hoverText(const json& result) {
  if (result.is_string()) return result.get<std::string>();
  if (result.is_object() && result.contains("contents")) return hoverText(result["contents"]);
  if (result.is_object() && result.contains("value")) return hoverText(result["value"]);
  if (result.is_array()) {
    std::string s;
    for (const auto& part : result) s += hoverText(part) + "\n";
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
      const std::string seen = uri + "\n" + msg;
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
