// Hostile load and input against a real HandlerServer on loopback (issue #19), with real client
// sockets: what is refused, when, with which JSON error, and that others keep being served.
// Nothing here measures time; bounded waits only tell "answered" from "never answered".
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "feedback-handler/http/raw_http_test_util.h"
#include "feedback-handler/http/server.h"
#include "feedback-handler/store/store.h"

namespace perfhat::handler {
namespace {

using namespace std::chrono_literals;
using testing::gzipZeros;
using testing::RawConnection;
using testing::RawResponse;

constexpr const char* kPostEndpoints[] = {"/v1/traces", "/v1/aggregates", "/v1/feedback:batchGet",
                                          "/v1/sync"};

class HostileServer : public ::testing::Test {
 protected:
  void start(ServerOptions o) {
    char tmpl[] = "/tmp/perfhat-hostile-XXXXXX";
    dir_ = mkdtemp(tmpl);
    StoreOptions so;
    so.path = dir_ + "/s.sqlite";
    store_ = std::make_unique<Store>(so);
    o.tokens = {"rw"};
    o.read_tokens = {"ro"};
    server_ = std::make_unique<HandlerServer>(*store_, o);
    port_ = server_->bind("127.0.0.1", 0);
    thread_ = std::thread([this] { server_->run(); });
  }
  void TearDown() override {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
    server_.reset();
    store_.reset();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  httplib::Client client(const std::string& token = "rw") const {
    httplib::Client c("127.0.0.1", port_);
    c.set_connection_timeout(5s);
    c.set_read_timeout(5s);
    if (!token.empty()) c.set_bearer_token_auth(token.c_str());
    return c;
  }
  static void expectError(const std::optional<RawResponse>& r, int status,
                          const std::string& code) {
    ASSERT_TRUE(r) << "no answer";
    EXPECT_EQ(r->status, status) << r->head << r->body;
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r->head << r->body;
    EXPECT_EQ(j["error"]["code"], code) << r->body;
    EXPECT_TRUE(j["error"]["message"].is_string()) << r->body;
  }

  std::string dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<HandlerServer> server_;
  std::thread thread_;
  int port_ = 0;
};

// Class 1: no body byte is read, let alone inflated, before the token is checked. The request
// announces a 1 MB gzip body and sends none of it: the 401 can only come before the body.
TEST_F(HostileServer, UnauthenticatedRequestsAreRefusedBeforeTheirBodyOnEveryEndpoint) {
  start({});
  for (const char* path : kPostEndpoints) {
    for (const std::string auth : {"", "Authorization: Bearer wrong\r\n"}) {
      RawConnection c(port_);
      ASSERT_TRUE(c.send(std::string("POST ") + path +
                         " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         "Content-Encoding: gzip\r\nContent-Length: 1048576\r\n" +
                         auth + "\r\n"));
      auto r = c.read();
      expectError(r, 401, "unauthenticated");
      EXPECT_EQ(r->header("Connection"), "close") << path;
      EXPECT_TRUE(c.closedByServer()) << path << ": a body left unread must not stay on the line";
    }
  }
  // A GET with a body, and a POST to a path that does not exist, are not read either.
  for (const std::string line : {"GET /v1/export?since=0", "POST /v1/nowhere", "PUT /v1/traces"}) {
    RawConnection c(port_);
    ASSERT_TRUE(c.send(line + " HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n"));
    auto r = c.read();
    ASSERT_TRUE(r) << line;
    EXPECT_TRUE(r->status == 401 || r->status == 404) << line << " " << r->status;
    EXPECT_TRUE(c.closedByServer()) << line;
  }
  // Expect: 100-continue gets the refusal instead of "continue".
  RawConnection c(port_);
  ASSERT_TRUE(
      c.send("POST /v1/feedback:batchGet HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
             "Content-Length: 1048576\r\n\r\n"));
  expectError(c.read(), 401, "unauthenticated");
}

TEST_F(HostileServer, OversizedBodiesAreRefusedBeforeReadingAndBombsAreCutAtTheDecodedLimit) {
  ServerOptions o;
  o.max_body_bytes = 64u << 10;
  o.max_decoded_bytes = 1u << 20;
  start(o);
  for (const char* path : kPostEndpoints) {
    RawConnection c(port_);  // announced too large: refused before any of it is sent
    ASSERT_TRUE(c.send(std::string("POST ") + path +
                       " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer rw\r\n"
                       "Content-Length: 100000000\r\n\r\n"));
    expectError(c.read(), 413, "payload_too_large");
  }
  // 64 MB of zeros in ~64 KB of gzip: inflation stops at the 1 MB decoded limit.
  const std::string bomb = gzipZeros(64u << 20);
  ASSERT_LT(bomb.size(), o.max_body_bytes);
  for (const char* path : {"/v1/traces", "/v1/aggregates", "/v1/feedback:batchGet"}) {
    httplib::Headers h{{"Content-Encoding", "gzip"}};
    auto r = client().Post(path, h, bomb, "application/json");
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 413) << path << " " << r->body;
    EXPECT_NE(r->body.find("decoded body exceeds 1048576"), std::string::npos) << r->body;
  }
  EXPECT_EQ(client().Get("/healthz")->status, 200);
}

// Chunked bodies have no announced size: the wire limit applies while they are read.
TEST_F(HostileServer, ChunkedBodiesAreCutAtTheWireLimit) {
  ServerOptions o;
  o.max_body_bytes = 64u << 10;  // wire limit ≈ 64 KiB + framing allowance (64 KiB + 1 %)
  start(o);
  for (const char* path : {"/v1/traces", "/v1/feedback:batchGet"}) {
    RawConnection c(port_);
    ASSERT_TRUE(c.send(std::string("POST ") + path +
                       " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer rw\r\nContent-Type: "
                       "application/json\r\nTransfer-Encoding: chunked\r\n\r\n"));
    const std::string chunk = "1000\r\n" + std::string(4096, ' ') + "\r\n";
    for (int i = 0; i < 256; ++i) {  // 1 MiB, never terminated: the server must not wait for more
      if (!c.send(chunk)) break;
    }
    expectError(c.read(), 413, "payload_too_large");
  }
}

// Class 2: connections that hold a thread (slow headers, idle keep-alive, busy exporters) do not
// lock out readers or health checks with the default thread count.
TEST_F(HostileServer, HeldConnectionsDoNotLockOutReadersOrHealthChecks) {
  start({});  // default FrontOptions: 8 threads kept ready
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 20; ++i) {  // headers that never end
    held.push_back(std::make_unique<RawConnection>(port_));
    held.back()->send("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ");
  }
  std::vector<httplib::Client> exporters;
  for (int i = 0; i < 12; ++i) {  // keep-alive connections after one request each
    exporters.push_back(client());
    exporters.back().set_keep_alive(true);
    auto r = exporters.back().Post("/v1/traces", "{}", "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
  auto health = client("").Get("/healthz");
  ASSERT_TRUE(health) << "healthz not answered while connections are held";
  EXPECT_EQ(health->status, 200);
  auto read = client("ro").Post("/v1/feedback:batchGet", R"({"keys":["a"]})", "application/json");
  ASSERT_TRUE(read) << "batchGet not answered while connections are held";
  EXPECT_EQ(read->status, 200) << read->body;
}

TEST_F(HostileServer, DripFedHeadersMeetADeadlineAndIdleConnectionsAreClosed) {
  ServerOptions o;
  o.front.header_timeout = 300ms;
  o.front.keep_alive_idle = 200ms;
  start(o);
  RawConnection drip(port_);
  ASSERT_TRUE(drip.send("GET /healthz HTTP/1.1\r\n"));
  std::optional<RawResponse> answer;
  for (int i = 0; i < 200 && !answer; ++i) {  // a header byte every 50 ms, for up to 10 s
    drip.send("X");
    answer = drip.read(50ms);
  }
  expectError(answer, 408, "deadline_exceeded");
  EXPECT_TRUE(drip.closedByServer());

  RawConnection idle(port_);
  ASSERT_TRUE(idle.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto r = idle.read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(idle.closedByServer()) << "idle keep-alive connection not closed";
}

// A client that reads its answer a little at a time cannot keep a connection thread: the whole
// response must be sent within a grace period plus its size at a minimum rate. A client reading
// at a normal rate gets the same large answer in full.
TEST_F(HostileServer, ASlowlyReadClientLosesItsConnectionAtTheSendDeadline) {
  ServerOptions o;
  o.front.send_grace = 200ms;
  o.front.min_send_bytes_per_second = 4u << 20;
  start(o);
  nlohmann::json req;
  req["keys"] = nlohmann::json::array();
  const std::string long_name(900, 'n');  // long keys: a large answer from few lookups
  for (int i = 0; i < 6000; ++i) {
    req["keys"].push_back("perfhat::slow_reader::" + long_name + std::to_string(i));
  }
  const std::string body = req.dump();
  const std::string request =
      "POST /v1/feedback:batchGet HTTP/1.1\r\nHost: x\r\n"
      "Authorization: Bearer ro\r\nContent-Type: application/json\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;

  RawConnection fast(port_);
  ASSERT_TRUE(fast.send(request));
  auto full = fast.read(60s);
  ASSERT_TRUE(full) << "a client reading at full speed got no complete answer";
  ASSERT_EQ(full->status, 200);
  size_t wmem_max = 4u << 20;  // the kernel's default for tcp_wmem's upper bound
  if (std::ifstream wmem("/proc/sys/net/ipv4/tcp_wmem"); wmem)
    wmem >> wmem_max >> wmem_max >> wmem_max;
  ASSERT_GT(full->body.size(), wmem_max) << "the answer must outgrow the kernel's socket buffers";

  RawConnection slow(port_, 4096);
  ASSERT_TRUE(slow.send(request));
  const size_t got = slow.readSlowly(1024, 20ms, 60s);  // ~50 KB/s, far below 4 MiB/s
  EXPECT_TRUE(slow.closed()) << "the slow reader kept its connection for a minute";
  EXPECT_LT(got, full->body.size()) << "the slow reader got the whole answer";
  auto metrics = client("").Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("perfhat_handler_send_timeouts_total 1"), std::string::npos)
      << metrics->body;

  auto health = client("").Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

TEST_F(HostileServer, ConnectionsBeyondTheCapsGetA503AndAreClosed) {
  ServerOptions o;
  o.front.max_connections_per_peer = 3;
  start(o);
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<RawConnection>(port_));
    held.back()->send("GET /healthz HTTP/1.1\r\nHost: x\r\n");  // admitted, headers pending
  }
  // Connections are admitted by the threads that serve them, not in the order they were
  // accepted: an extra sent now could take a slot before the last held one is counted. So the
  // extras wait until the three are admitted, as seen from another peer (127.0.0.2), whose own
  // probes are admitted before they are answered: admitted held = connections_total - probes.
  bool all_held_admitted = false;
  for (int probes = 1; probes <= 200 && !all_held_admitted; ++probes) {
    RawConnection probe(port_, 0, "127.0.0.2");
    probe.send("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    auto m = probe.read();
    ASSERT_TRUE(m && m->status == 200);
    const std::string key = "\nperfhat_handler_connections_total ";
    const auto at = m->body.find(key);
    ASSERT_NE(at, std::string::npos) << m->body;
    const long admitted = std::atol(m->body.c_str() + at + key.size()) - probes;
    all_held_admitted = admitted >= 3;
    if (!all_held_admitted) std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(all_held_admitted) << "the held connections were not admitted";
  RawConnection extra(port_);
  extra.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  std::optional<RawResponse> refused = extra.read();
  EXPECT_TRUE(extra.closedByServer());
  expectError(refused, 503, "unavailable");
  EXPECT_EQ(refused->header("Retry-After"), "1");
  held.clear();  // their slots free up: served again
  for (int i = 0; i < 100; ++i) {
    auto r = client("").Get("/healthz");
    if (r && r->status == 200) return;
    std::this_thread::sleep_for(20ms);
  }
  ADD_FAILURE() << "not served after the held connections closed";
}

// Class 3: failed guesses are limited per address before the token is looked at, and the
// per-client limit does not depend on how the Authorization header is spelt.
TEST_F(HostileServer, FailedAuthenticationIsLimitedPerAddress) {
  ServerOptions o;
  o.auth_failures = {.rate_per_s = 0.001, .burst = 3};
  start(o);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(client("guess" + std::to_string(i)).Get("/v1/export?since=0")->status, 401);
  }
  auto r = client("guess4").Get("/v1/export?since=0");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 429) << r->body;
  EXPECT_FALSE(r->get_header_value("Retry-After").empty());
  EXPECT_EQ(nlohmann::json::parse(r->body)["error"]["code"], "resource_exhausted");
  EXPECT_EQ(client("").Get("/healthz")->status, 200);  // open endpoints are not affected
}

TEST_F(HostileServer, RateLimitKeysOnTheTokenNotOnTheHeaderSpelling) {
  ServerOptions o;
  o.rate_limit = {.rate_per_s = 0.001, .burst = 2};
  start(o);
  auto get = [&](const std::string& authorization) {
    httplib::Client c = client("");
    return c.Get("/v1/export?since=0", {{"Authorization", authorization}})->status;
  };
  EXPECT_EQ(get("Bearer rw"), 200);
  EXPECT_EQ(get("bearer rw"), 200);
  EXPECT_EQ(get("BEARER   rw"), 429);
  EXPECT_EQ(get("bEaReR rw"), 429);
  EXPECT_EQ(get("Bearer ro"), 200);  // another token is another client
}

// Class 4: /v1/sync makes the local handler call its upstreams: write access, rate limited.
TEST_F(HostileServer, SyncNeedsWriteAccessAndIsRateLimited) {
  ServerOptions o;
  o.sync_rate = {.rate_per_s = 0.001, .burst = 2};
  start(o);
  EXPECT_EQ(client("ro").Post("/v1/sync")->status, 403);
  EXPECT_EQ(client("rw").Post("/v1/sync")->status, 404);  // deployed mode: admitted, no syncer
  EXPECT_EQ(client("rw").Post("/v1/sync")->status, 404);
  auto r = client("rw").Post("/v1/sync");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 429) << r->body;
}

}  // namespace
}  // namespace perfhat::handler
