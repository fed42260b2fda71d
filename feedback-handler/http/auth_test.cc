#include <gtest/gtest.h>

#include "feedback-handler/http/auth.h"
#include "feedback-handler/http/rate_limiter.h"
#include "feedback-handler/sync/export_json.h"
#include "feedback-handler/sync/syncer.h"
#include "feedback-handler/util/base64.h"

namespace perfhat::handler {
namespace {

TEST(TokenAuth, ChecksBearerTokensAndScopes) {
  TokenAuth auth({"rw-token"}, {"ro-token"});
  EXPECT_EQ(auth.check("Bearer rw-token", Access::kWrite), AuthResult::kOk);
  EXPECT_EQ(auth.check("bearer rw-token", Access::kRead), AuthResult::kOk);
  EXPECT_EQ(auth.check("Bearer ro-token", Access::kRead), AuthResult::kOk);
  EXPECT_EQ(auth.check("Bearer ro-token", Access::kWrite), AuthResult::kForbidden);
  EXPECT_EQ(auth.check("Bearer rw-toke", Access::kRead), AuthResult::kInvalid);
  EXPECT_EQ(auth.check("Bearer rw-token2", Access::kRead), AuthResult::kInvalid);
  EXPECT_EQ(auth.check("", Access::kRead), AuthResult::kMissing);
  EXPECT_EQ(auth.check("Basic abc", Access::kRead), AuthResult::kMissing);
  TokenAuth open({}, {});
  EXPECT_EQ(open.check("", Access::kWrite), AuthResult::kOk);
}

// RFC 7235 credentials: the scheme in any case, one or more spaces, surrounding space trimmed.
TEST(TokenAuth, BearerTokenIsParsedLikeRfc7235Credentials) {
  EXPECT_EQ(bearerToken("Bearer abc"), "abc");
  EXPECT_EQ(bearerToken("bEaReR abc"), "abc");
  EXPECT_EQ(bearerToken("  BEARER \t abc  "), "abc");
  EXPECT_EQ(bearerToken("Bearerabc"), "");
  EXPECT_EQ(bearerToken("Bearer "), "");
  EXPECT_EQ(bearerToken("Basic abc"), "");
  EXPECT_EQ(bearerToken(""), "");
}

// The client a limit is kept for is the matched token, whatever the header's spelling.
TEST(TokenAuth, NamesTheMatchedTokenAsTheClient) {
  TokenAuth auth({"a", "b"}, {"r"});
  std::string c1, c2, c3, c4;
  EXPECT_EQ(auth.check("Bearer b", Access::kWrite, &c1), AuthResult::kOk);
  EXPECT_EQ(auth.check("BEARER   b ", Access::kRead, &c2), AuthResult::kOk);
  EXPECT_EQ(auth.check("bearer a", Access::kRead, &c3), AuthResult::kOk);
  EXPECT_EQ(auth.check("Bearer r", Access::kRead, &c4), AuthResult::kOk);
  EXPECT_EQ(c1, c2);
  EXPECT_NE(c1, c3);
  EXPECT_NE(c4, c1);
  EXPECT_NE(c4, c3);
}

TEST(RateLimiter, WouldAllowDoesNotTakeAToken) {
  double now = 0;
  RateLimiter rl(RateLimitOptions{.rate_per_s = 1, .burst = 1}, [&] { return now; });
  EXPECT_TRUE(rl.wouldAllow("a"));
  EXPECT_TRUE(rl.wouldAllow("a"));
  EXPECT_TRUE(rl.allow("a"));
  double retry = 0;
  EXPECT_FALSE(rl.wouldAllow("a", &retry));
  EXPECT_NEAR(retry, 1.0, 1e-9);
  now = 1;
  EXPECT_TRUE(rl.wouldAllow("a"));
}

TEST(TokenAuth, ConstantTimeEquals) {
  EXPECT_TRUE(constantTimeEquals("abc", "abc"));
  EXPECT_FALSE(constantTimeEquals("abc", "abd"));
  EXPECT_FALSE(constantTimeEquals("abc", "abcd"));
  EXPECT_FALSE(constantTimeEquals("", "a"));
  EXPECT_TRUE(constantTimeEquals("", ""));
}

TEST(RateLimiter, TokenBucketRefillsWithTheClock) {
  double now = 100;
  RateLimiter rl(RateLimitOptions{.rate_per_s = 2, .burst = 3}, [&] { return now; });
  EXPECT_TRUE(rl.allow("a"));
  EXPECT_TRUE(rl.allow("a"));
  EXPECT_TRUE(rl.allow("a"));
  double retry = 0;
  EXPECT_FALSE(rl.allow("a", &retry));
  EXPECT_NEAR(retry, 0.5, 1e-9);
  EXPECT_TRUE(rl.allow("b"));  // per client
  now += 0.5;
  EXPECT_TRUE(rl.allow("a"));
  EXPECT_FALSE(rl.allow("a"));
  RateLimiter off(RateLimitOptions{}, [&] { return now; });
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(off.allow("x"));
}

TEST(Base64, RoundTripsAndRejectsGarbage) {
  for (const std::string& s : std::vector<std::string>{"", "f", "fo", "foo", "foob", "fooba",
                                                       "foobar", std::string("\0\xff\x10", 3)}) {
    EXPECT_EQ(base64Decode(base64Encode(s)), s);
  }
  EXPECT_EQ(base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_FALSE(base64Decode("Zm9"));
  EXPECT_FALSE(base64Decode("Zm9v!mFy"));
  EXPECT_FALSE(base64Decode("Z=9v"));
}

TEST(ExportJson, RoundTripsAndRejectsCorruptSketches) {
  ExportPage p;
  p.cursor = 42;
  p.more = true;
  AggValue v;
  v.sketch.add(123);
  v.x1 = 2;
  p.rows.aggregates[AggKey{AggKind::kCallSite, "f()", "g()", 7, "s", "v", "e", "o"}] = v;
  p.rows.functions["f()"] = FunctionInfo{"_Z1fv", "/a.cc", 3, 99};
  p.rows.hosts[{"f()", "h"}] = 5;
  ExportPage q = parseExport(serializeExport(p));
  EXPECT_EQ(q.cursor, 42u);
  EXPECT_TRUE(q.more);
  ASSERT_EQ(q.rows.aggregates.size(), 1u);
  EXPECT_EQ(q.rows.aggregates.begin()->first, p.rows.aggregates.begin()->first);
  EXPECT_EQ(q.rows.aggregates.begin()->second.sketch, v.sketch);
  EXPECT_EQ(q.rows.functions["f()"].mangled, "_Z1fv");
  EXPECT_EQ(q.rows.hosts.size(), 1u);
  EXPECT_THROW(parseExport("[]"), ExportFormatError);
  EXPECT_THROW(parseExport(R"({"cursor":"x"})"), ExportFormatError);
  EXPECT_THROW(
      parseExport(R"({"cursor":"1","hosts":[{"key":"k","host":"h","last_seen_ns":1e99}]})"),
      ExportFormatError);
  EXPECT_THROW(
      parseExport(
          R"({"cursor":"1","aggregates":[{"kind":"f","key":"k","bucket":1,"sketch":"AAAA"}]})"),
      ExportFormatError);
}

TEST(Upstream, ParsesUrlAndToken) {
  Upstream u = parseUpstream("http://10.0.0.1:4318/,secret");
  EXPECT_EQ(u.url, "http://10.0.0.1:4318");
  EXPECT_EQ(u.token, "secret");
  EXPECT_EQ(parseUpstream("https://handler.example.com").token, "");
  EXPECT_THROW(parseUpstream("ftp://x"), std::invalid_argument);
  EXPECT_THROW(parseUpstream("localhost:4318"), std::invalid_argument);
}

}  // namespace
}  // namespace perfhat::handler
