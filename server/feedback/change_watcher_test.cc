// ChangeWatcher over a real HttpSource and a cpp-httplib server on loopback that plays the
// handler's /v1/changes: with long-poll (parks until the test "commits"), without it (an older
// handler that ignores wait_ms), and down. Waits are on events, with generous bounds.
#include "server/feedback/change_watcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <httplib.h>

#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "server/feedback/http_source.h"

namespace perfhat::feedback {
namespace {

using namespace std::chrono_literals;

class ChangesHandler {
 public:
  explicit ChangesHandler(bool long_poll) : long_poll_(long_poll) {
    server_.Get("/v1/changes", [this](const httplib::Request& req, httplib::Response& res) {
      std::unique_lock lock(mu_);
      ++requests_;
      last_query_ = req.params.count("wait_ms") ? "wait" : "plain";
      uint64_t since = req.get_param_value("since").empty()
                           ? cursor_
                           : std::stoull(req.get_param_value("since"));
      if (long_poll_ && req.has_param("wait_ms")) {
        res.set_header("X-Perfhat-Wait-Ms", req.get_param_value("wait_ms"));
        ++parked_;
        cv_.notify_all();
        cv_.wait_for(lock, 60s, [&] { return cursor_ > since || closing_; });
        --parked_;
      }
      nlohmann::json keys = nlohmann::json::array();
      if (cursor_ > since) keys.push_back(changed_key_);
      res.set_content(nlohmann::json{{"cursor", std::to_string(cursor_)}, {"keys", keys}}.dump(),
                      "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 2000 && !server_.is_running(); ++i) std::this_thread::sleep_for(1ms);
  }
  ~ChangesHandler() {
    {
      std::lock_guard lock(mu_);
      closing_ = true;
    }
    cv_.notify_all();
    server_.stop();
    thread_.join();
  }
  void commit(const std::string& key) {
    {
      std::lock_guard lock(mu_);
      ++cursor_;
      changed_key_ = key;
    }
    cv_.notify_all();
  }
  bool waitParked() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 30s, [&] { return parked_ > 0; });
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string lastQuery() {
    std::lock_guard lock(mu_);
    return last_query_;
  }

 private:
  bool long_poll_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t cursor_ = 5;
  std::string changed_key_;
  std::string last_query_;
  int parked_ = 0;
  int requests_ = 0;
  bool closing_ = false;
};

// Collects on_change calls for the test thread.
struct Changes {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<ChangesResult> seen;
  void add(const ChangesResult& r) {
    std::lock_guard lock(mu);
    seen.push_back(r);
    cv.notify_all();
  }
  bool waitFor(size_t n) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, 30s, [&] { return seen.size() >= n; });
  }
};

TEST(ChangeWatcher, LongPollDeliversACommitAndInvalidatesExactlyThatKey) {
  ChangesHandler handler(/*long_poll=*/true);
  auto provider = std::make_shared<FeedbackProvider>(
      std::make_shared<HttpSource>(handler.url(), HttpOptions{}), CacheOptions{});
  Changes changes;
  WatchOptions wo;
  wo.poll_interval = 1h;  // a plain poll would never come in time: only the long-poll can
  ChangeWatcher w(provider, wo, [&](const ChangesResult& r) { changes.add(r); });
  ASSERT_TRUE(handler.waitParked());
  EXPECT_EQ(handler.lastQuery(), "wait");
  handler.commit("a::f()");
  ASSERT_TRUE(changes.waitFor(1));
  {
    std::lock_guard lock(changes.mu);
    EXPECT_EQ(changes.seen[0].keys, std::vector<std::string>{"a::f()"});
    EXPECT_TRUE(changes.seen[0].waited);
  }
  EXPECT_TRUE(w.longPolling());
  handler.commit("b::g()");  // the watcher parks again and sees the next one too
  ASSERT_TRUE(changes.waitFor(2));
  std::lock_guard lock(changes.mu);
  EXPECT_EQ(changes.seen[1].keys, std::vector<std::string>{"b::g()"});
}

TEST(ChangeWatcher, StopAbortsAParkedLongPoll) {
  ChangesHandler handler(/*long_poll=*/true);
  auto provider = std::make_shared<FeedbackProvider>(
      std::make_shared<HttpSource>(handler.url(), HttpOptions{}), CacheOptions{});
  WatchOptions wo;
  wo.wait = 50s;  // the handler would hold it this long
  auto w = std::make_unique<ChangeWatcher>(provider, wo, [](const ChangesResult&) {});
  ASSERT_TRUE(handler.waitParked());
  auto stopped = std::async(std::launch::async, [&] { w->stop(); });
  EXPECT_EQ(stopped.wait_for(20s), std::future_status::ready) << "stop() waited for the long-poll";
}

TEST(ChangeWatcher, FallsBackToPlainPollingWhenTheHandlerIgnoresWaitMs) {
  ChangesHandler handler(/*long_poll=*/false);
  auto provider = std::make_shared<FeedbackProvider>(
      std::make_shared<HttpSource>(handler.url(), HttpOptions{}), CacheOptions{});
  Changes changes;
  std::mutex pmu;
  std::vector<std::string> problems;
  WatchOptions wo;
  wo.poll_interval = 20ms;
  ChangeWatcher w(
      provider, wo, [&](const ChangesResult& r) { changes.add(r); },
      [&](const std::string& p) {
        std::lock_guard lock(pmu);
        problems.push_back(p);
      });
  // The first answer (no X-Perfhat-Wait-Ms) switches it to plain polling; commit after that.
  for (int i = 0; i < 30000 && w.longPolling(); ++i) std::this_thread::sleep_for(1ms);
  ASSERT_FALSE(w.longPolling());
  handler.commit("a::f()");
  ASSERT_TRUE(changes.waitFor(1));
  EXPECT_EQ(handler.lastQuery(), "plain");
  std::lock_guard lock(pmu);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems[0].find("does not support long-poll"), std::string::npos) << problems[0];
}

TEST(ChangeWatcher, HandlerDownIsReportedOnceAndRetriedUntilStopped) {
  // A port that was free a moment ago and has no listener (bound, never listened, closed):
  // connections are refused at once.
  int port = 0;
  {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);
    ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port = ntohs(addr.sin_port);
    ::close(fd);
  }
  auto provider = std::make_shared<FeedbackProvider>(
      std::make_shared<HttpSource>("http://127.0.0.1:" + std::to_string(port), HttpOptions{}),
      CacheOptions{});
  std::mutex pmu;
  std::condition_variable pcv;
  std::vector<std::string> problems;
  WatchOptions wo;
  wo.min_backoff = 1ms;
  wo.max_backoff = 5ms;
  auto w = std::make_unique<ChangeWatcher>(
      provider, wo, [](const ChangesResult&) { ADD_FAILURE() << "no change from a dead handler"; },
      [&](const std::string& p) {
        std::lock_guard lock(pmu);
        problems.push_back(p);
        pcv.notify_all();
      });
  {
    std::unique_lock lock(pmu);
    ASSERT_TRUE(pcv.wait_for(lock, 30s, [&] { return !problems.empty(); }));
  }
  // Let it retry a few times (backoff ≤ 5 ms): still reported once per outage.
  std::this_thread::sleep_for(100ms);
  w->stop();
  std::lock_guard lock(pmu);
  EXPECT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("change feed"), std::string::npos);
}

}  // namespace
}  // namespace perfhat::feedback
