// GET /v1/changes long-poll against the real perfhat-handler: argument errors, the granted wait
// header, a commit waking parked requests, the bound on parked requests (429), and shutdown
// answering parked requests. The order of events is forced, not timed: with --max-change-waiters 2
// only 2 requests park, so of 3 concurrent long-polls the first to answer is the refused one, and
// at that moment the other two are parked.
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/integration/handler_process.h"
#include "tests/integration/handler_test_util.h"

namespace perfhat::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

std::string currentCursor(const std::string& url) {
  httplib::Client c = client(url);
  auto r = c.Get("/v1/changes?since=");
  if (!r || r->status != 200) throw std::runtime_error("changes?since= failed");
  return json::parse(r->body)["cursor"].get<std::string>();
}

using Answer = std::future<httplib::Result>;

Answer longPoll(const std::string& url, const std::string& since) {
  return std::async(std::launch::async, [url, since] {
    httplib::Client c = client(url);
    c.set_read_timeout(std::chrono::seconds(90));
    return c.Get("/v1/changes?since=" + since + "&wait_ms=600000");  // capped to 30 s
  });
}

// Starts 3 long-polls and returns the two that stay parked, after checking the third was refused.
std::vector<Answer> parkTwo(const std::string& url, const std::string& since) {
  std::vector<Answer> all;
  all.reserve(3);
  for (int i = 0; i < 3; ++i) all.push_back(longPoll(url, since));
  for (int round = 0; round < 900; ++round) {
    for (size_t i = 0; i < all.size(); ++i) {
      if (all[i].wait_for(100ms) != std::future_status::ready) continue;
      httplib::Result r = all[i].get();
      EXPECT_TRUE(r);
      if (r) {
        EXPECT_EQ(r->status, 429) << r->body;
        EXPECT_EQ(r->get_header_value("Retry-After"), "1");
      }
      all.erase(all.begin() + static_cast<long>(i));
      return all;
    }
  }
  ADD_FAILURE() << "no long-poll was refused";
  return all;
}

TEST(HandlerChanges, LongPollIsWokenByIngestBoundedAndAnsweredAtShutdown) {
  TempDir dir("changes");
  auto handler = std::make_unique<HandlerProcess>(
      std::vector<std::string>{"--mode", "deployed", "--allow-unauthenticated",
                               "--max-change-waiters", "2", "--store", dir / "d.sqlite"});
  const std::string url = handler->url();
  httplib::Client c = client(url);
  std::string since = currentCursor(url);

  auto bad = c.Get("/v1/changes?since=" + since + "&wait_ms=soon");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("wait_ms"), std::string::npos) << bad->body;

  auto quiet = c.Get("/v1/changes?since=" + since + "&wait_ms=20");  // nothing commits
  ASSERT_TRUE(quiet);
  EXPECT_EQ(quiet->status, 200);
  EXPECT_EQ(quiet->get_header_value("X-Perfhat-Wait-Ms"), "20");
  EXPECT_EQ(json::parse(quiet->body)["keys"].size(), 0u);

  // Two parked requests are woken by one ingest commit and get its key.
  std::vector<Answer> parked = parkTwo(url, since);
  ASSERT_EQ(parked.size(), 2u);
  auto post = c.Post("/v1/traces", otlp::encodeJson(spansFor("demo::leaf(int)", {1e6, 2e6}, 7)),
                     "application/json");
  ASSERT_TRUE(post && post->status == 200);
  for (auto& a : parked) {
    httplib::Result r = a.get();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->get_header_value("X-Perfhat-Wait-Ms"), "30000");
    json body = json::parse(r->body);
    EXPECT_EQ(body["keys"], json::array({"demo::leaf(int)"})) << r->body;
    EXPECT_GT(std::stoull(body["cursor"].get<std::string>()), std::stoull(since));
  }

  // Shutdown answers parked requests (well before their 30 s wait) and the handler exits 0.
  since = currentCursor(url);
  parked = parkTwo(url, since);
  ASSERT_EQ(parked.size(), 2u);
  auto exited = std::async(std::launch::async, [&] { return handler->terminate(); });
  for (auto& a : parked) {
    ASSERT_EQ(a.wait_for(15s), std::future_status::ready) << "parked request not answered";
    httplib::Result r = a.get();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(json::parse(r->body)["keys"].size(), 0u);
  }
  int status = exited.get();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(HandlerChanges, ALocalHandlersPullWakesItsLongPolls) {
  // Data arriving through the sync (not ingest) must wake parked requests too: without that
  // they would answer only at the end of their wait, with nothing.
  TempDir dir("changes-local");
  HandlerProcess deployed(
      {"--mode", "deployed", "--allow-unauthenticated", "--store", dir / "d.sqlite"});
  HandlerProcess local({"--mode", "local", "--allow-unauthenticated", "--max-change-waiters", "2",
                        "--store", dir / "l.sqlite", "--upstream", deployed.url(),
                        "--sync-interval", "3600"});
  // The pull at start-up commits (the upstream's cursor); the test begins after it.
  httplib::Client lc = client(local.url());
  for (int i = 0; i < 600; ++i) {
    auto h = lc.Get("/healthz");
    if (h && h->status == 200 &&
        !json::parse(h->body)["upstreams"][0]["last_success"].get<std::string>().empty()) {
      break;
    }
    std::this_thread::sleep_for(50ms);
  }
  const std::string since = currentCursor(local.url());
  std::vector<Answer> parked = parkTwo(local.url(), since);
  ASSERT_EQ(parked.size(), 2u);
  auto post = client(deployed.url())
                  .Post("/v1/traces", otlp::encodeJson(spansFor("demo::pulled(int)", {3e6}, 7)),
                        "application/json");
  ASSERT_TRUE(post && post->status == 200);
  auto sync = lc.Post("/v1/sync");
  ASSERT_TRUE(sync && sync->status == 200) << (sync ? sync->body : "no answer");
  for (auto& a : parked) {
    httplib::Result r = a.get();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(json::parse(r->body)["keys"], json::array({"demo::pulled(int)"})) << r->body;
  }
}

TEST(HandlerChanges, ACursorNewerThanTheStoreIsAReset) {
  TempDir dir("changes-reset");
  HandlerProcess handler(
      {"--mode", "deployed", "--allow-unauthenticated", "--store", dir / "d.sqlite"});
  httplib::Client c = client(handler.url());
  auto r = c.Get("/v1/changes?since=999999&wait_ms=30000");  // answers at once: nothing to wait for
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body).value("reset", false), true) << r->body;
}

}  // namespace
}  // namespace perfhat::testing
