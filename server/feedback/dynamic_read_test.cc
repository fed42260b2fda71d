// The dynamic-metrics read: HttpSource against a real cpp-httplib server on loopback (a current
// handler, an older one without the route, one that is down), and FeedbackProvider's cache.
#include <atomic>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>

#include "server/feedback/http_source.h"
#include "server/feedback/provider.h"

namespace perfhat::feedback {
namespace {

using namespace std::chrono_literals;

constexpr const char* kWindow =
    R"("window":{"from":"2026-11-24T20:00:00Z","to":"2026-11-25T20:00:00Z"},)"
    R"("coverage":{"from":"2026-11-24T20:00:00Z","to":"2026-11-25T20:00:00Z"})";

// `dynamic` false: a handler from before /v1/dynamic (its 404 says "no such endpoint").
class Handler {
 public:
  explicit Handler(bool dynamic) {
    if (dynamic) {
      server_.Get("/v1/dynamic", [this](const httplib::Request& req, httplib::Response& res) {
        ++reads;
        last_limit = req.get_param_value("limit");
        const std::string key = req.get_param_value("key");
        if (key != "a()" && key != "b()") {
          res.status = 404;
          res.set_content(
              R"({"error":{"code":"not_found","message":"no calls and no probe of key"}})",
              "application/json");
          return;
        }
        res.set_content(std::string(R"({"key":")") + key + R"(",)" + kWindow +
                            R"j(,"visits":3,"callers":[{"key":"main()","count":3}],"fan_in":1})j",
                        "application/json");
      });
      server_.Get("/v1/dynamic/graph", [](const httplib::Request& req, httplib::Response& res) {
        res.set_content("digraph { \"" + req.get_param_value("key") + "\" }", "text/vnd.graphviz");
      });
    }
    server_.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (res.status == 404 && res.body.empty()) {  // as the real handler: keep a route's body
        ++reads;
        res.set_content(
            R"({"error":{"code":"not_found","message":"no such endpoint: GET )" + req.path + "\"}}",
            "application/json");
      }
    });
    server_.set_keep_alive_timeout(1);  // the destructor waits for open connections
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 2000 && !server_.is_running(); ++i) std::this_thread::sleep_for(1ms);
  }
  ~Handler() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::atomic<int> reads{0};
  std::string last_limit;

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

TEST(LspDynamicRead, CurrentHandlerAnswersMetricsAndUnknownKeysAreNotErrors) {
  Handler h(true);
  HttpSource src(h.url(), {});
  DynamicResult r = src.dynamicMetrics("a()");
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_TRUE(r.metrics);
  EXPECT_EQ(r.metrics->visits, 3);
  EXPECT_EQ(r.metrics->callers.size(), 1u);
  EXPECT_EQ(h.last_limit, "20");
  DynamicResult unknown = src.dynamicMetrics("nobody()");
  EXPECT_TRUE(unknown.ok()) << unknown.error;
  EXPECT_FALSE(unknown.metrics);
  DynamicResult g = src.dynamicGraph("a()", 2);
  ASSERT_TRUE(g.ok()) << g.error;
  EXPECT_EQ(g.dot, "digraph { \"a()\" }");
}

TEST(LspDynamicRead, OlderHandlerIsUnsupportedAndAskedOncePerTtl) {
  Handler h(false);
  ManualClock clock;
  FeedbackProvider p(std::make_shared<HttpSource>(h.url(), HttpOptions{}), {100, 600s}, clock);
  DynamicLookup l = p.dynamic({"a()", "b()", "c()"});
  EXPECT_TRUE(l.unsupported);
  EXPECT_TRUE(l.metrics.empty());
  EXPECT_EQ(l.status, FetchStatus::Ok);  // not an error: no lens
  EXPECT_EQ(h.reads, 1);                 // not once per function
  EXPECT_TRUE(p.dynamic({"a()"}).unsupported);
  EXPECT_EQ(h.reads, 1);
  clock.advance(601s);
  p.dynamic({"a()"});
  EXPECT_EQ(h.reads, 2);
  EXPECT_TRUE(p.dynamicGraph("a()", 2).unsupported);
}

TEST(LspDynamicRead, CachedUntilTtlAndServedStaleWhenTheHandlerIsDown) {
  ManualClock clock;
  std::string url;
  std::shared_ptr<FeedbackProvider> p;
  {
    Handler h(true);
    url = h.url();
    HttpOptions o;
    o.connect_timeout_ms = 200;
    p = std::make_shared<FeedbackProvider>(std::make_shared<HttpSource>(url, o),
                                           CacheOptions{100, 600s}, clock);
    DynamicLookup l = p->dynamic({"a()", "nobody()", "b()"});
    EXPECT_EQ(l.requests, 3u);
    ASSERT_EQ(l.metrics.size(), 2u);  // nobody() is not probed: no metrics, no error
    EXPECT_EQ(l.metrics[0].key, "a()");
    EXPECT_FALSE(l.stale);
    // While a batchGet waits on the handler: the cache only, expired entries marked stale.
    clock.advance(601s);
    DynamicLookup busy = p->dynamic({"a()", "b()"}, 200, /*cache_only=*/true);
    EXPECT_EQ(busy.requests, 0u);
    EXPECT_TRUE(busy.stale);
    EXPECT_EQ(busy.metrics.size(), 2u);
    EXPECT_EQ(h.reads, 3);
    clock.advance(-601s);
    DynamicLookup again = p->dynamic({"a()", "nobody()", "b()"});
    EXPECT_EQ(again.requests, 0u);
    EXPECT_EQ(again.metrics.size(), 2u);
    EXPECT_EQ(h.reads, 3);
  }
  // The handler is gone; after the TTL the first read fails and the rest are not attempted.
  clock.advance(601s);
  DynamicLookup down = p->dynamic({"a()", "nobody()", "b()"});
  EXPECT_EQ(down.requests, 1u);
  EXPECT_EQ(down.status, FetchStatus::Unreachable);
  EXPECT_FALSE(down.unsupported);
  EXPECT_TRUE(down.stale);
  EXPECT_EQ(down.metrics.size(), 2u);  // expired entries as the fallback
  // The next rebuild does not knock again at once (a hanging handler would cost a timeout).
  DynamicLookup resting = p->dynamic({"a()", "b()"});
  EXPECT_EQ(resting.requests, 0u);
  EXPECT_TRUE(resting.stale);
  EXPECT_EQ(resting.metrics.size(), 2u);
  clock.advance(11s);
  EXPECT_EQ(p->dynamic({"a()", "b()"}).requests, 1u);
}

TEST(LspDynamicRead, ChangedKeysAreDroppedByPoll) {
  Handler h(true);
  ManualClock clock;
  class Source : public HttpSource {
   public:
    using HttpSource::HttpSource;
    ChangesResult changes(const std::string&) override {
      ChangesResult r;
      r.cursor = "2";
      r.keys = {"a()"};
      return r;
    }
  };
  FeedbackProvider p(std::make_shared<Source>(h.url(), HttpOptions{}), {100, 600s}, clock);
  p.dynamic({"a()", "b()"});
  EXPECT_EQ(h.reads, 2);
  p.poll();
  EXPECT_EQ(p.dynamic({"a()", "b()"}).requests, 1u);  // a() again, b() from the cache
}

}  // namespace
}  // namespace perfhat::feedback
