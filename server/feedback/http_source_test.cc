// HttpSource against a real cpp-httplib server on loopback (port chosen by the kernel).
#include "server/feedback/http_source.h"

#include <atomic>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "server/feedback/provider.h"

namespace perfhat::feedback {
namespace {

using namespace std::chrono_literals;

// A tiny handler: answers batchGet from a fixed item list, checks the bearer token, and can be
// switched to fail with 500.
class TestHandler {
 public:
  explicit TestHandler(std::string token = "") : token_(std::move(token)) {
    server_.Post(
        "/v1/feedback:batchGet", [this](const httplib::Request& req, httplib::Response& res) {
          ++requests_;
          if (!authorized(req, res)) return;
          if (fail_) {
            res.status = 500;
            res.set_content(R"js({"error":{"code":503,"message":"storage unavailable"}})js",
                            "application/json");
            return;
          }
          auto body = nlohmann::json::parse(req.body);
          last_keys_ = body["keys"].get<std::vector<std::string>>();
          nlohmann::json items = nlohmann::json::array();
          nlohmann::json missing = nlohmann::json::array();
          for (const auto& k : last_keys_) {
            if (k == "agile::Story::tasks() const") {
              items.push_back(
                  {{"key", k}, {"stats", {{"count", 100}, {"mean_ns", 2.0e6}, {"p50_ns", 1.9e6}}}});
            } else {
              missing.push_back(k);
            }
          }
          res.set_content(
              nlohmann::json{{"items", items}, {"missing", missing}, {"cursor", "c7"}}.dump(),
              "application/json");
        });
    server_.Get("/v1/changes", [this](const httplib::Request& req, httplib::Response& res) {
      if (!authorized(req, res)) return;
      last_since_ = req.get_param_value("since");
      res.set_content(R"js({"cursor":"c8","keys":["agile::Story::tasks() const"]})js",
                      "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // The socket is already listening (connections queue in the backlog); wait, bounded, for
    // the accept loop so stop() in the destructor cannot race with its start.
    for (int i = 0; i < 2000 && !server_.is_running(); ++i) std::this_thread::sleep_for(1ms);
  }
  ~TestHandler() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void setFail(bool f) { fail_ = f; }
  int requests() const { return requests_; }
  std::vector<std::string> last_keys_;
  std::string last_since_;

 private:
  bool authorized(const httplib::Request& req, httplib::Response& res) {
    if (token_.empty() || req.get_header_value("Authorization") == "Bearer " + token_) return true;
    res.status = 401;
    res.set_content(R"js({"error":{"code":401,"message":"missing or invalid bearer token"}})js",
                    "application/json");
    return false;
  }
  std::string token_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> fail_{false};
  std::atomic<int> requests_{0};
};

// A port with nothing listening: bind, read the port, close.
std::string deadUrl() {
  httplib::Server s;
  int port = s.bind_to_any_port("127.0.0.1");
  s.stop();
  return "http://127.0.0.1:" + std::to_string(port);
}

TEST(LspHttpSource, BatchGetOk) {
  TestHandler h("s3cret");
  HttpSource src(h.url(), {"s3cret"});
  auto r = src.batchGet({"agile::Story::tasks() const", "x()"});
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.response.items.size(), 1u);
  EXPECT_EQ(r.response.items[0].stats->count, 100u);
  EXPECT_EQ(r.response.missing, std::vector<std::string>{"x()"});
  EXPECT_EQ(r.response.cursor, "c7");
  EXPECT_EQ(h.last_keys_.size(), 2u);
}

TEST(LspHttpSource, WrongTokenIsUnauthorized) {
  TestHandler h("s3cret");
  HttpSource src(h.url(), {"wrong"});
  auto r = src.batchGet({"a()"});
  EXPECT_EQ(r.status, FetchStatus::Unauthorized);
  EXPECT_NE(r.error.find("401"), std::string::npos);
  EXPECT_NE(r.error.find("bearer token"), std::string::npos);
}

TEST(LspHttpSource, ServerErrorIsReported) {
  TestHandler h;
  h.setFail(true);
  HttpSource src(h.url(), {});
  auto r = src.batchGet({"a()"});
  EXPECT_EQ(r.status, FetchStatus::ServerError);
  EXPECT_NE(r.error.find("storage unavailable"), std::string::npos);
}

TEST(LspHttpSource, DownHandlerIsUnreachable) {
  HttpSource src(deadUrl(), {"", 300, 300});
  auto r = src.batchGet({"a()"});
  EXPECT_EQ(r.status, FetchStatus::Unreachable);
  EXPECT_FALSE(r.error.empty());
}

TEST(LspHttpSource, ChangesPassesTheCursor) {
  TestHandler h;
  HttpSource src(h.url() + "/", {});
  auto c = src.changes("c7 x");
  ASSERT_EQ(c.status, FetchStatus::Ok) << c.error;
  EXPECT_EQ(h.last_since_, "c7 x");
  EXPECT_EQ(c.cursor, "c8");
  EXPECT_EQ(c.keys, std::vector<std::string>{"agile::Story::tasks() const"});
}

TEST(LspHttpSource, BadUrlsAreRejected) {
  EXPECT_THROW(HttpSource("127.0.0.1:80", {}), std::invalid_argument);
  EXPECT_THROW(HttpSource("ftp://x", {}), std::invalid_argument);
  EXPECT_THROW(HttpSource("http://", {}), std::invalid_argument);
}

TEST(LspHttpSource, ParseChangesResponse) {
  auto r = parseChangesResponse(R"js({"cursor":12,"changes":[{"key":"a()"}],"reset":true})js");
  EXPECT_EQ(r.cursor, "12");
  EXPECT_TRUE(r.all);
  EXPECT_EQ(r.keys, std::vector<std::string>{"a()"});
  EXPECT_THROW(parseChangesResponse("[]"), FeedbackFormatError);
  EXPECT_THROW(parseChangesResponse(R"js({"keys":[1]})js"), FeedbackFormatError);
  EXPECT_THROW(parseChangesResponse("{"), FeedbackFormatError);
}

// The provider over a real handler: cached, then served stale when the handler goes down.
TEST(LspHttpSource, ProviderServesStaleCacheWhenTheHandlerIsDown) {
  ManualClock clock;
  auto h = std::make_unique<TestHandler>();
  auto src = std::make_shared<HttpSource>(h->url(), HttpOptions{"", 300, 300});
  FeedbackProvider p(src, {100, 600s}, clock);
  auto first = p.get({"agile::Story::tasks() const"});
  ASSERT_FALSE(first.stale) << first.error;
  ASSERT_EQ(first.items.size(), 1u);
  EXPECT_EQ(h->requests(), 1);
  auto second = p.get({"agile::Story::tasks() const"});
  EXPECT_FALSE(second.fetched);  // served from cache
  EXPECT_EQ(h->requests(), 1);

  h.reset();  // handler down
  clock.advance(601s);
  auto third = p.get({"agile::Story::tasks() const"});
  EXPECT_TRUE(third.fetched);
  EXPECT_TRUE(third.stale);
  EXPECT_EQ(third.status, FetchStatus::Unreachable);
  ASSERT_EQ(third.items.size(), 1u);  // still served, from the expired entry
  EXPECT_EQ(third.items[0].stats->mean_ns, 2.0e6);
}

}  // namespace
}  // namespace perfhat::feedback

namespace perfhat::feedback {
namespace {

// A handler that answers batchGet with whatever `respond` does, for the bounds below.
class RawHandler {
 public:
  explicit RawHandler(httplib::Server::Handler respond) {
    server_.Post("/v1/feedback:batchGet", std::move(respond));
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 2000 && !server_.is_running(); ++i) std::this_thread::sleep_for(1ms);
  }
  ~RawHandler() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

HttpOptions bounded() {
  HttpOptions o;
  o.total_timeout_ms = 500;
  o.max_response_bytes = 64 * 1024;
  return o;
}

// httplib's read timeout is per read: a handler sending one byte every 50 ms would hold the
// request for ever. The total deadline cuts it off.
TEST(HttpSourceBounds, DripFeedingHandlerIsCutOffByTheTotalDeadline) {
  RawHandler h([](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("application/json", [](size_t, httplib::DataSink& sink) {
      std::this_thread::sleep_for(50ms);
      return sink.write(" ", 1);
    });
  });
  HttpSource src(h.url(), bounded());
  FetchResult r = src.batchGet({"k"});
  EXPECT_EQ(r.status, FetchStatus::Unreachable);
  EXPECT_NE(r.error.find("did not answer within 500 ms"), std::string::npos) << r.error;
}

TEST(HttpSourceBounds, OversizedBodyIsRefused) {
  RawHandler h([](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"items":[],"pad":")" + std::string(1 << 20, 'x') + "\"}",
                    "application/json");
  });
  HttpSource src(h.url(), bounded());
  FetchResult r = src.batchGet({"k"});
  EXPECT_EQ(r.status, FetchStatus::BadResponse);
  EXPECT_NE(r.error.find("larger than"), std::string::npos) << r.error;
}

TEST(HttpSourceBounds, DeeplyNestedBodyIsMalformedNotACrash) {
  RawHandler h([](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"items":)" + std::string(20'000, '[') + std::string(20'000, ']') + "}",
                    "application/json");
  });
  HttpSource src(h.url(), bounded());
  FetchResult r = src.batchGet({"k"});
  EXPECT_EQ(r.status, FetchStatus::BadResponse);
  EXPECT_NE(r.error.find("nested deeper"), std::string::npos) << r.error;
}

TEST(HttpSourceBounds, ErrorBodyIsBoundedToo) {
  RawHandler h([](const httplib::Request&, httplib::Response& res) {
    res.status = 503;
    res.set_content(std::string(1 << 20, 'e'), "text/plain");
  });
  HttpSource src(h.url(), bounded());
  FetchResult r = src.batchGet({"k"});
  EXPECT_EQ(r.status, FetchStatus::BadResponse);
  EXPECT_NE(r.error.find("larger than"), std::string::npos) << r.error;
}

TEST(HttpSourceBounds, DeeplyNestedChangesAreMalformed) {
  std::string deep =
      R"({"cursor":"1","keys":)" + std::string(20'000, '[') + std::string(20'000, ']') + "}";
  try {
    parseChangesResponse(deep);
    FAIL() << "accepted";
  } catch (const FeedbackFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("nested deeper"), std::string::npos) << e.what();
  }
}

// The cache answers while a fetch is in flight (it is not locked across the request).
TEST(FeedbackProviderCached, ServesTheCacheWithoutAskingTheSource) {
  std::atomic<bool> release{false};
  std::atomic<int> requests{0};
  RawHandler h([&](const httplib::Request&, httplib::Response& res) {
    if (++requests > 1) {
      while (!release) std::this_thread::sleep_for(1ms);
    }
    res.set_content(R"js({"items":[{"key":"a()","stats":{"count":1,"mean_ns":5,"p50_ns":5}}]})js",
                    "application/json");
  });
  HttpOptions o;
  o.total_timeout_ms = 60'000;
  auto provider = std::make_shared<FeedbackProvider>(std::make_shared<HttpSource>(h.url(), o),
                                                     CacheOptions{100, std::chrono::seconds(0)});
  ASSERT_EQ(provider->get({"a()"}).items.size(), 1u);
  std::thread slow([&] { provider->get({"a()"}); });  // TTL 0: refetches, and the handler hangs
  while (requests < 2) std::this_thread::sleep_for(1ms);
  Lookup cached = provider->cached({"a()", "b()"});
  EXPECT_EQ(cached.items.size(), 1u);
  EXPECT_TRUE(cached.stale);
  EXPECT_EQ(cached.requested_keys, 2u);  // expired a(), missing b()
  EXPECT_EQ(requests, 2);
  release = true;
  slow.join();
}

}  // namespace
}  // namespace perfhat::feedback
