// The ingest pipeline's restart path: requests a crash left in the intake log (acknowledged, not
// yet aggregated) are replayed before the pipeline serves, exactly once.
#include "feedback-handler/ingest/pipeline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "feedback-handler/otlp/otlp_encode.h"

namespace perfhat::handler {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kT0 = 1'763'700'000'000'000'000ULL;

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

struct TempStore {
  fs::path dir = fs::temp_directory_path() / ("perfhat-pipeline-test-" + std::to_string(getpid()));
  TempStore() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~TempStore() { fs::remove_all(dir); }
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
  TempStore t;
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
  TempStore t;
  Store store(t.opts());
  IngestPipeline p(store);
  otlp::ExportRequest r = requestFor("a::f", 5);
  const std::string body = otlp::encodeProtobuf(r);
  IngestStats st = p.ingest(r, body, BodyFormat::kProtobuf);
  EXPECT_EQ(st.spans, 5u);
  ASSERT_TRUE(p.flush());
  EXPECT_EQ(countOf(store, "a::f"), 5u);
}

}  // namespace
}  // namespace perfhat::handler
