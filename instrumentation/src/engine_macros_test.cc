// Several probes in one function: PERFHAT_REQUEST and PERFHAT_FUNCTION in the same scope, nested
// PERFHAT_SCOPE blocks, two probes on one line, and the rule that the size/attribute macros bind
// to the innermost probe declared before them.
#include <gtest/gtest.h>

#include "perfhat/memory_exporter.hpp"
#include "perfhat/perfhat.hpp"

namespace macrons {
[[gnu::noinline]] int request_then_function(int n) {
  PERFHAT_REQUEST("GET /both");
  PERFHAT_FUNCTION();
  PERFHAT_RESULT_SIZE(n);  // the function probe: declared last
  {
    PERFHAT_SCOPE("inner block");
    PERFHAT_RESULT_SIZE(n * 10);  // the scope probe
    PERFHAT_ATTRIBUTE("block.attr", 1);
  }
  PERFHAT_ATTRIBUTE("fn.attr", 2);  // the function probe again once the block has closed
  return n;
}
[[gnu::noinline]] int function_then_request(int n) {
  PERFHAT_FUNCTION();
  PERFHAT_REQUEST("GET /inner");
  PERFHAT_RESULT_SIZE(n);  // the request probe: declared last
  return n;
}
// clang-format off
[[gnu::noinline]] void one_line() { { PERFHAT_SCOPE("left"); } { PERFHAT_SCOPE("right"); } }
// clang-format on
}  // namespace macrons

namespace {

const perfhat::SpanData* find(const std::vector<perfhat::SpanData>& spans,
                              const std::string& name) {
  for (const auto& s : spans) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

bool has_attr(const perfhat::SpanData& s, const std::string& key) {
  for (const auto& a : s.attributes) {
    if (a.key == key) return true;
  }
  return false;
}

std::shared_ptr<perfhat::MemoryExporter> start() {
  perfhat::Config c;
  c.sampler = "full";
  c.service_name = "macros-test";
  auto ex = std::make_shared<perfhat::MemoryExporter>();
  EXPECT_TRUE(perfhat::init(c, ex)) << perfhat::last_error();
  return ex;
}

TEST(InstrMacros, RequestAndFunctionShareAScope) {
  auto ex = start();
  EXPECT_EQ(macrons::request_then_function(3), 3);
  perfhat::flush();
  auto spans = ex->spans();
  ASSERT_EQ(spans.size(), 3u);
  const auto* req = find(spans, "GET /both");
  const auto* block = find(spans, "inner block");
  const perfhat::SpanData* fn = nullptr;
  for (const auto& s : spans) {
    if (!s.is_request && s.name != "inner block") fn = &s;
  }
  ASSERT_TRUE(req && block && fn);
  EXPECT_TRUE(req->is_request);
  EXPECT_NE(fn->function.find("request_then_function"), std::string::npos);
  EXPECT_EQ(fn->parent_span_id, req->span_id);
  EXPECT_EQ(block->parent_span_id, fn->span_id);
  EXPECT_EQ(req->result_size, -1);
  EXPECT_EQ(fn->result_size, 3);
  EXPECT_EQ(block->result_size, 30);
  EXPECT_TRUE(has_attr(*block, "block.attr"));
  EXPECT_FALSE(has_attr(*block, "fn.attr"));
  EXPECT_TRUE(has_attr(*fn, "fn.attr"));
  EXPECT_FALSE(has_attr(*fn, "block.attr"));
  EXPECT_TRUE(req->attributes.empty());
  perfhat::shutdown();
}

TEST(InstrMacros, LaterRequestIsInnermost) {
  auto ex = start();
  macrons::function_then_request(5);
  perfhat::flush();
  auto spans = ex->spans();
  ASSERT_EQ(spans.size(), 2u);
  const auto* req = find(spans, "GET /inner");
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(req->result_size, 5);
  for (const auto& s : spans) {
    if (&s != req) {
      EXPECT_EQ(s.result_size, -1);
    }
  }
  perfhat::shutdown();
}

TEST(InstrMacros, ProbesOnOneLineAreDistinctSites) {
  auto ex = start();
  macrons::one_line();
  perfhat::flush();
  auto spans = ex->spans();
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_NE(find(spans, "left"), nullptr);
  EXPECT_NE(find(spans, "right"), nullptr);
  EXPECT_EQ(find(spans, "left")->line, find(spans, "right")->line);
  perfhat::shutdown();
}

}  // namespace
