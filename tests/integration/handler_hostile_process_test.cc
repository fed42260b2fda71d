// perfhat-handler processes against hostile surroundings (issue #19): startup refuses to expose
// an unauthenticated handler beyond loopback, and a local handler's pulls survive upstreams that
// answer with a gzip bomb or drip their answer, and still stop promptly on SIGTERM.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "feedback-handler/http/raw_http_test_util.h"
#include "tests/integration/handler_process.h"
#include "tests/integration/handler_test_util.h"

namespace perfhat::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

TEST(HandlerExposure, NoTokenBeyondLoopbackIsRefusedInBothModes) {
  TempDir dir("exposure");
  for (const std::string listen : {"0.0.0.0:0", "[::]:0"}) {
    auto [code, out] = runHandler({"--mode", "local", "--store", dir / "l.sqlite", "--upstream",
                                   "http://127.0.0.1:1", "--listen", listen});
    EXPECT_EQ(code, 2) << out;
    EXPECT_NE(out.find("refusing to listen on"), std::string::npos) << out;
    EXPECT_NE(out.find("upstreams"), std::string::npos) << out;  // says what would be exposed
  }
  auto [code, out] = runHandler({"--mode", "deployed", "--store", dir / "d.sqlite",
                                 "--allow-unauthenticated", "--listen", "0.0.0.0:0", "--version"});
  EXPECT_EQ(code, 0) << out;  // flags parse; --version exits before listening
  // With a token, or with the explicit opt-in, it starts.
  HandlerProcess with_token({"--mode", "local", "--store", dir / "t.sqlite", "--upstream",
                             "http://127.0.0.1:1", "--sync-interval", "3600", "--token", "t"});
  EXPECT_EQ(client(with_token.url(), "t").Get("/healthz")->status, 200);
}

// An upstream of our own making: answers /v1/export as told.
class FakeUpstream {
 public:
  explicit FakeUpstream(httplib::Server::Handler export_handler) {
    svr_.Get("/v1/export", std::move(export_handler));
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
  }
  ~FakeUpstream() {
    svr_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server svr_;
  int port_ = 0;
  std::thread thread_;
};

// An upstream that sends its headers, then its body one byte per 100 ms (bounded: a minute).
class DrippingUpstream {
 public:
  DrippingUpstream() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listen_fd_, 16) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      throw std::runtime_error("listen failed");
    }
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      for (int conn = 0; conn < 16 && !stop_; ++conn) {
        pollfd p{listen_fd_, POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0) {
          --conn;
          continue;
        }
        int fd = ::accept(listen_fd_, nullptr, nullptr);
        if (fd < 0) continue;
        ++connections_;
        const std::string head =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n";
        ::send(fd, head.data(), head.size(), MSG_NOSIGNAL);
        for (int i = 0; i < 600 && !stop_; ++i) {
          if (::send(fd, " ", 1, MSG_NOSIGNAL) != 1) break;
          std::this_thread::sleep_for(100ms);
        }
        ::close(fd);
      }
    });
  }
  ~DrippingUpstream() {
    stop_ = true;
    thread_.join();
    ::close(listen_fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int connections() const { return connections_; }

 private:
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

long peakRssKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

json syncOnce(const std::string& url) {
  httplib::Client c = client(url, "t");
  c.set_read_timeout(60s);
  auto r = c.Post("/v1/sync");
  if (!r || r->status != 200) throw std::runtime_error("sync failed");
  return json::parse(r->body);
}

TEST(HandlerSyncLimits, AGzipBombFromTheUpstreamIsCutOffAtTheLimit) {
  const std::string bomb = gzipZeros(512u << 20);  // 512 MB of zeros in about 0.5 MB
  FakeUpstream up([&](const httplib::Request&, httplib::Response& res) {
    res.set_header("Content-Encoding", "gzip");
    res.set_content(bomb, "application/octet-stream");  // a type httplib does not gzip again
  });
  TempDir dir("bomb");
  HandlerProcess local({"--mode", "local", "--store", dir / "l.sqlite", "--token", "t",
                        "--upstream", up.url(), "--sync-interval", "3600",
                        "--sync-max-response-bytes", "4000000"});
  json r = syncOnce(local.url());
  EXPECT_FALSE(r["ok"].get<bool>()) << r;
  EXPECT_NE(r["upstreams"][0]["error"].get<std::string>().find("larger than 4000000"),
            std::string::npos)
      << r;
  const long peak = peakRssKb(local.pid());
  EXPECT_GT(peak, 0);
  EXPECT_LT(peak, 200 * 1024) << "peak RSS " << peak << " kB: the answer was inflated";
  EXPECT_EQ(client(local.url()).Get("/healthz")->status, 200);
}

TEST(HandlerSyncLimits, ADrippingUpstreamMeetsThePullDeadlineAndSigtermStopsAPull) {
  DrippingUpstream up;
  TempDir dir("drip");
  {
    HandlerProcess local({"--mode", "local", "--store", dir / "a.sqlite", "--token", "t",
                          "--upstream", up.url(), "--sync-interval", "3600", "--sync-deadline",
                          "1"});
    json r = syncOnce(local.url());
    EXPECT_FALSE(r["ok"].get<bool>()) << r;
    EXPECT_NE(r["upstreams"][0]["error"].get<std::string>().find("deadline"), std::string::npos)
        << r;
  }
  // A pull with a long deadline is in progress (the first one starts at once); SIGTERM must end
  // the handler anyway, with its normal exit.
  HandlerProcess local({"--mode", "local", "--store", dir / "b.sqlite", "--token", "t",
                        "--upstream", up.url(), "--sync-interval", "3600", "--sync-deadline",
                        "600"});
  const int before = up.connections();
  for (int i = 0; i < 300 && up.connections() == before; ++i) std::this_thread::sleep_for(20ms);
  ASSERT_GT(up.connections(), before) << "the handler never called the upstream";
  ::kill(local.pid(), SIGTERM);
  int status = -1;
  pid_t done = 0;
  for (int i = 0; i < 300 && done == 0; ++i) {  // up to 30 s: far beyond a prompt stop
    done = ::waitpid(local.pid(), &status, WNOHANG);
    if (done == 0) std::this_thread::sleep_for(100ms);
  }
  ASSERT_EQ(done, local.pid()) << "SIGTERM did not stop the handler during a pull";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace perfhat::testing
