// The ingest pipeline's restart path: requests a crash left in the intake log (acknowledged, not
// yet aggregated) are replayed before the pipeline serves, exactly once.
#include "feedback-handler/ingest/pipeline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/test_units.h"
#include "feedback-handler/otlp/otlp_encode.h"

namespace perfhat::handler {
namespace {

namespace fs = std::filesystem;

using perfhat::test_units::kT0;

otlp::ExportRequest requestFor(const std::string& fn, int spans) {
  otlp::ExportRequest r;
  r.resources.push_back({{"service.name", std::string("svc")}});
  for (int i = 0; i < spans; ++i) {
    otlp::Span s;
    s.trace_id = std::string(16, static_cast<char>('a' + i % 26));
    s.span_id = std::string(7, 's') + static_cast<char>('0' + i % 10);
    s.name = "op";
    s.start_unix_nano = kT0 + static_cast<uint64_t>(i) * 1000;
    s.end_unix_nano = s.start_unix_nano + 2'000'000;
    s.attributes = {{"code.function.name", fn}};
    r.spans.push_back(std::move(s));
  }
  return r;
}

struct PipelineStore {
  fs::path dir = fs::temp_directory_path() / ("perfhat-pipeline-test-" + std::to_string(getpid()));
  PipelineStore() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~PipelineStore() { fs::remove_all(dir); }
  StoreOptions opts() const {
    StoreOptions o;
    o.path = (dir / "s.sqlite").string();
    o.now_ns = [] { return static_cast<int64_t>(kT0) + 60'000'000'000; };
    return o;
  }
};

uint64_t countOf(Store& s, const std::string& key) {
  BatchGetResponse r = s.batchGet(BatchGetRequest{{key}, std::nullopt, std::nullopt});
  return r.items.empty() || !r.items[0].stats ? 0 : r.items[0].stats->count;
}

TEST(IngestPipeline, ReplaysTheIntakeLogOnceAtStartup) {
  PipelineStore t;
  {
    Store store(t.opts());
    // As a crash leaves it: three acknowledged bodies (protobuf, JSON, libperfhat aggregate
    // rows), one that does not decode (it could not have been acknowledged; replay skips it),
    // and a torn last append.
    const std::string proto = otlp::encodeProtobuf(requestFor("a::f", 7));
    const std::string json = otlp::encodeJson(requestFor("a::g", 3));
    const std::string rows =
        R"({"sites":[{"name":"op","function":"a::h"}],"rows":[{"kind":"function","site":0,"minute":)" +
        std::to_string(kT0 / 60'000'000'000ULL) + R"(,"bins":[[700,5]],"sum":5000}]})";
    IntakeLog log(IntakeLog::pathFor(t.opts().path));
    log.recover(0);
    log.append({{static_cast<int>(BodyFormat::kProtobuf), proto},
                {static_cast<int>(BodyFormat::kProtobuf), "\xff\xff garbage"},
                {static_cast<int>(BodyFormat::kJson), json},
                {static_cast<int>(BodyFormat::kAggregateRows), rows}});
    std::ofstream(log.path(), std::ios::app) << std::string("\x40\x00\x00\x00torn", 8);
    EXPECT_EQ(countOf(store, "a::f"), 0u);
  }
  {
    Store store(t.opts());
    IngestPipeline p(store);
    EXPECT_EQ(p.replayed().replayed, 3u);
    EXPECT_EQ(p.replayed().undecodable, 1u);
    EXPECT_EQ(countOf(store, "a::f"), 7u);
    EXPECT_EQ(countOf(store, "a::g"), 3u);
    EXPECT_EQ(countOf(store, "a::h"), 5u);
    EXPECT_EQ(fs::file_size(IntakeLog::pathFor(t.opts().path)), 0u);
  }
  Store store(t.opts());
  IngestPipeline again(store);  // a second start finds nothing to replay: no double count
  EXPECT_EQ(again.replayed().replayed, 0u);
  EXPECT_EQ(countOf(store, "a::f"), 7u);
}

TEST(IngestPipeline, ReadsSeeEveryAcknowledgedRequestAfterFlush) {
  PipelineStore t;
  Store store(t.opts());
  IngestPipeline p(store);
  otlp::ExportRequest r = requestFor("a::f", 5);
  const std::string body = otlp::encodeProtobuf(r);
  IngestStats st = p.ingest(r, body, BodyFormat::kProtobuf);
  EXPECT_EQ(st.spans, 5u);
  ASSERT_TRUE(p.flush());
  EXPECT_EQ(countOf(store, "a::f"), 5u);
}

// A damaged record in the middle of the intake log costs that record alone: every other
// acknowledged request replays, once, and the damage is counted for /metrics.
TEST(IngestPipeline, ADamagedIntakeRecordCostsOnlyItself) {
  PipelineStore t;
  const std::vector<std::string> fns = {"a::f0", "a::f1", "a::f2", "a::f3", "a::f4"};
  {
    Store store(t.opts());
    IntakeLog log(IntakeLog::pathFor(t.opts().path));
    log.recover(0);
    for (const std::string& fn : fns) {
      log.append(
          {{static_cast<int>(BodyFormat::kProtobuf), otlp::encodeProtobuf(requestFor(fn, 2))}});
    }
  }
  const std::string path = IntakeLog::pathFor(t.opts().path);
  {
    // One flipped byte in the body of the middle record.
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    const auto size = static_cast<std::streamoff>(fs::file_size(path));
    f.seekg(size / 2);
    const char c = static_cast<char>(f.get());
    f.seekp(size / 2);
    f.put(static_cast<char>(c ^ 0x40));
  }
  Store store(t.opts());
  IngestPipeline p(store);
  EXPECT_EQ(p.replayed().replayed, 4u);
  EXPECT_EQ(p.intakeDamage().records, 1u);
  EXPECT_EQ(countOf(store, "a::f0") + countOf(store, "a::f1") + countOf(store, "a::f2") +
                countOf(store, "a::f3") + countOf(store, "a::f4"),
            8u);
  EXPECT_EQ(countOf(store, "a::f0"), 2u);
  EXPECT_EQ(countOf(store, "a::f4"), 2u);
  bool reported = false;
  for (const MetricSample& m : p.samples()) {
    if (m.name == "perfhat_handler_intake_damaged_records_total") reported = m.value == 1;
  }
  EXPECT_TRUE(reported);
}

// Spans outside the intake limits are taken out of the request with the reason the client sees
// (OTLP partialSuccess), and nothing of them is stored; replay applies the same screen.
TEST(IngestPipeline, SpansBeyondTheIntakeLimitsAreRefusedWithAReason) {
  PipelineStore t;
  Store store(t.opts());
  IngestPipeline p(store);
  otlp::ExportRequest r = requestFor("a::ok", 3);
  otlp::ExportRequest bad = requestFor("a::bad", 3);
  bad.spans[0].start_unix_nano = 1'000'000'000;  // 1970
  bad.spans[0].end_unix_nano = 2'000'000'000;
  bad.spans[1].start_unix_nano = 18'000'000'000'000'000'000ULL;  // 2540
  bad.spans[1].end_unix_nano = bad.spans[1].start_unix_nano + 5;
  bad.spans[2].attributes.emplace_back("perfhat.sampling.weight", 1e308);
  for (auto& s : bad.spans) r.spans.push_back(s);
  const std::string body = otlp::encodeProtobuf(r);
  IngestStats st = p.ingest(r, body, BodyFormat::kProtobuf);
  EXPECT_EQ(st.spans, 3u);
  EXPECT_EQ(r.rejected, 3u);
  EXPECT_NE(r.rejection_reason.find("outside the accepted window"), std::string::npos)
      << r.rejection_reason;
  ASSERT_TRUE(p.flush());
  EXPECT_EQ(countOf(store, "a::ok"), 3u);
  BatchGetResponse got = store.batchGet(BatchGetRequest{{"a::bad"}, std::nullopt, std::nullopt});
  EXPECT_TRUE(got.items.empty());
  EXPECT_EQ(store.exportSince(0).rows.functions.count("a::bad"), 0u);
}

}  // namespace
}  // namespace perfhat::handler
