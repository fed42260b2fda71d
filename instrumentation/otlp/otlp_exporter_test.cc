// OTLP exporter against a real in-process cpp-httplib server on loopback (port 0).
#include "perfhat/otlp_exporter.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "otlp_encode.h"
#include "perfhat/memory_exporter.hpp"
#include "perfhat/perfhat.hpp"

namespace {

// Minimal protobuf reader for assertions: field number -> list of raw values.
struct PbField {
  int field;
  int wire;
  uint64_t num;
  std::string bytes;
};
bool read_varint(const std::string& s, size_t& i, uint64_t& v) {
  v = 0;
  for (int shift = 0; i < s.size() && shift < 64; shift += 7) {
    uint8_t b = static_cast<uint8_t>(s[i++]);
    v |= uint64_t(b & 0x7F) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}
std::vector<PbField> pb_parse(const std::string& s) {
  std::vector<PbField> out;
  size_t i = 0;
  while (i < s.size()) {
    uint64_t key;
    if (!read_varint(s, i, key)) throw std::runtime_error("bad varint");
    PbField f{static_cast<int>(key >> 3), static_cast<int>(key & 7), 0, {}};
    if (f.wire == 0) {
      read_varint(s, i, f.num);
    } else if (f.wire == 1) {
      if (i + 8 > s.size()) throw std::runtime_error("truncated fixed64");
      for (int k = 0; k < 8; ++k) f.num |= uint64_t(uint8_t(s[i + k])) << (8 * k);
      i += 8;
    } else if (f.wire == 2) {
      uint64_t n;
      read_varint(s, i, n);
      if (i + n > s.size()) throw std::runtime_error("truncated bytes");
      f.bytes = s.substr(i, n);
      i += n;
    } else {
      throw std::runtime_error("unexpected wire type");
    }
    out.push_back(std::move(f));
  }
  return out;
}
std::vector<std::string> sub(const std::string& msg, int field) {
  std::vector<std::string> out;
  for (auto& f : pb_parse(msg)) {
    if (f.field == field && f.wire == 2) out.push_back(f.bytes);
  }
  return out;
}
// KeyValue list -> key -> AnyValue bytes.
std::map<std::string, std::string> kvs(const std::string& msg, int field) {
  std::map<std::string, std::string> out;
  for (auto& kv : sub(msg, field)) out[sub(kv, 1).at(0)] = sub(kv, 2).at(0);
  return out;
}

struct Received {
  std::mutex mu;
  std::vector<std::string> traces, metrics, aggregates;
  std::vector<std::string> content_types, auth, encodings;
  int trace_posts = 0;
};

class Server {
 public:
  explicit Server(int status = 200) : traces_status(status) {
    srv_.Post("/v1/traces", [this](const httplib::Request& q, httplib::Response& r) {
      std::lock_guard<std::mutex> l(rx.mu);
      ++rx.trace_posts;
      rx.traces.push_back(q.body);
      rx.content_types.push_back(q.get_header_value("Content-Type"));
      rx.auth.push_back(q.get_header_value("Authorization"));
      rx.encodings.push_back(q.get_header_value("Content-Encoding"));
      r.status = traces_status.load();
    });
    srv_.Post("/v1/metrics", [this](const httplib::Request& q, httplib::Response& r) {
      std::lock_guard<std::mutex> l(rx.mu);
      rx.metrics.push_back(q.body);
      r.status = 200;
    });
    srv_.Post("/v1/aggregates", [this](const httplib::Request& q, httplib::Response& r) {
      std::lock_guard<std::mutex> l(rx.mu);
      rx.aggregates.push_back(q.body);
      rx.content_types.push_back(q.get_header_value("Content-Type"));
      r.status = 200;
    });
    port_ = srv_.bind_to_any_port("127.0.0.1");
    th_ = std::thread([this] { srv_.listen_after_bind(); });
    // httplib 0.11 has no wait_until_ready(): poll is_running() (bounded).
    for (int i = 0; i < 2000 && !srv_.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~Server() {
    srv_.stop();
    th_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  Received rx;
  std::atomic<int> traces_status;  // what POST /v1/traces answers

 private:
  httplib::Server srv_;
  int port_ = 0;
  std::thread th_;
};

// A loopback port with nothing listening: bind, read the port, close.
int dead_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

}  // namespace

namespace otlpns {
[[gnu::noinline]] int compute(int x) {
  PERFHAT_FUNCTION();
  PERFHAT_RESULT_SIZE(x);
  return x * 2;
}
}  // namespace otlpns

namespace {

perfhat::Config config_for(const std::string& url) {
  perfhat::Config c;
  c.sampler = "full";
  c.endpoint = url;
  c.service_name = "otlp-test";
  c.service_version = "1.2.3";
  c.max_retries = 2;
  c.retry_backoff_s = 0.01;
  return c;
}

TEST(InstrOtlpExporter, ProtobufSpansAreDecodable) {
  Server srv;
  auto c = config_for(srv.url());
  c.token = "s3cret";
  c.otlp_metrics = true;  // off by default (perfhat-handler does not serve /v1/metrics)
  ASSERT_TRUE(perfhat::init(c)) << perfhat::last_error();  // picks OTLP from the endpoint
  for (int i = 0; i < 3; ++i) otlpns::compute(i);
  perfhat::shutdown();  // flushes
  std::lock_guard<std::mutex> l(srv.rx.mu);
  ASSERT_FALSE(srv.rx.traces.empty());
  EXPECT_EQ(srv.rx.content_types[0], "application/x-protobuf");
  EXPECT_EQ(srv.rx.auth[0], "Bearer s3cret");
  int compute_spans = 0;
  for (const auto& body : srv.rx.traces) {
    for (const auto& rs : sub(body, 1)) {
      auto res = kvs(sub(rs, 1).at(0), 1);
      EXPECT_EQ(sub(res.at("service.name"), 1).at(0), "otlp-test");
      EXPECT_EQ(sub(res.at("service.version"), 1).at(0), "1.2.3");
      EXPECT_TRUE(res.count("host.name"));
      for (const auto& ss : sub(rs, 2)) {
        for (const auto& sp : sub(ss, 2)) {
          auto attrs = kvs(sp, 9);
          EXPECT_EQ(sub(sp, 1).at(0).size(), 16u);  // trace_id
          EXPECT_EQ(sub(sp, 2).at(0).size(), 8u);   // span_id
          if (sub(attrs.at("code.function.name"), 1).at(0) == "int otlpns::compute(int)") {
            ++compute_spans;
            EXPECT_EQ(sub(attrs.at("code.function.mangled"), 1).at(0), "_ZN6otlpns7computeEi");
            EXPECT_TRUE(attrs.count("code.file.path"));
            EXPECT_TRUE(attrs.count("code.line.number"));
            EXPECT_TRUE(attrs.count("perfhat.sampling.weight"));
            EXPECT_TRUE(attrs.count("perfhat.result.size"));
          }
        }
      }
    }
  }
  EXPECT_EQ(compute_spans, 3);
  ASSERT_FALSE(srv.rx.metrics.empty());  // phase-1 aggregates
  auto metrics = sub(sub(sub(srv.rx.metrics[0], 1).at(0), 2).at(0), 2);
  ASSERT_EQ(metrics.size(), 3u);
  EXPECT_EQ(sub(metrics[0], 1).at(0), "perfhat.function.calls");
}

TEST(InstrOtlpExporter, JsonSpansAreDecodable) {
  Server srv;
  auto c = config_for(srv.url());
  c.protocol = "http/json";
  c.headers = "x-tenant=a%20b, x-other = 1";
  ASSERT_TRUE(perfhat::init(c)) << perfhat::last_error();
  otlpns::compute(7);
  perfhat::shutdown();
  std::lock_guard<std::mutex> l(srv.rx.mu);
  ASSERT_FALSE(srv.rx.traces.empty());
  EXPECT_EQ(srv.rx.content_types[0], "application/json");
  bool found = false;
  for (const auto& body : srv.rx.traces) {
    auto j = nlohmann::json::parse(body);
    for (const auto& sp : j["resourceSpans"][0]["scopeSpans"][0]["spans"]) {
      std::map<std::string, nlohmann::json> attrs;
      for (const auto& a : sp["attributes"]) attrs[a["key"]] = a["value"];
      if (attrs["code.function.name"]["stringValue"] != "int otlpns::compute(int)") continue;
      found = true;
      EXPECT_EQ(sp["traceId"].get<std::string>().size(), 32u);
      EXPECT_EQ(attrs["perfhat.result.size"]["intValue"], "7");
      EXPECT_EQ(attrs["perfhat.sampling.weight"]["doubleValue"], 1.0);
      EXPECT_EQ(attrs["code.function.mangled"]["stringValue"], "_ZN6otlpns7computeEi");
    }
  }
  EXPECT_TRUE(found);
}

TEST(InstrOtlpExporter, UnreachableEndpointAppKeepsRunningDropsCounted) {
  auto c = config_for("http://127.0.0.1:" + std::to_string(dead_port()));
  ASSERT_TRUE(perfhat::init(c));
  auto before = perfhat::counters();
  int sum = 0;
  for (int i = 0; i < 50; ++i) sum += otlpns::compute(i);
  EXPECT_EQ(sum, 2450);
  perfhat::flush();
  auto after = perfhat::counters();
  EXPECT_EQ(after.spans_dropped_export - before.spans_dropped_export, 50u);
  EXPECT_EQ(after.export_failures - before.export_failures, 3u);  // 1 try + 2 retries
  EXPECT_EQ(after.spans_exported, before.spans_exported);
  perfhat::shutdown();
}

TEST(InstrOtlpExporter, ServerErrorRetriesThenDropsCounted) {
  Server srv(500);
  auto c = config_for(srv.url());
  ASSERT_TRUE(perfhat::init(c));
  auto before = perfhat::counters();
  for (int i = 0; i < 10; ++i) otlpns::compute(i);
  perfhat::flush();
  auto after = perfhat::counters();
  {
    std::lock_guard<std::mutex> l(srv.rx.mu);
    EXPECT_EQ(srv.rx.trace_posts, 3);
  }
  EXPECT_EQ(after.spans_dropped_export - before.spans_dropped_export, 10u);
  perfhat::shutdown();
}

// OTEL_EXPORTER_OTLP_COMPRESSION=gzip: the body goes gzip-compressed with Content-Encoding set,
// and the (gunzipping) receiver gets exactly the spans of an uncompressed export.
TEST(InstrOtlpExporter, GzipCompressedExportDecodesToTheSameSpans) {
  Server srv;  // httplib servers gunzip request bodies by Content-Encoding
  auto c = config_for(srv.url());
  c.compression = "gzip";
  ASSERT_TRUE(perfhat::init(c)) << perfhat::last_error();
  for (int i = 0; i < 50; ++i) otlpns::compute(i);
  perfhat::shutdown();
  std::lock_guard<std::mutex> l(srv.rx.mu);
  ASSERT_FALSE(srv.rx.traces.empty());
  EXPECT_EQ(srv.rx.encodings[0], "gzip");
  int compute_spans = 0;
  for (const auto& body : srv.rx.traces) {
    for (const auto& rs : sub(body, 1)) {
      for (const auto& ss : sub(rs, 2)) {
        for (const auto& sp : sub(ss, 2)) {
          auto attrs = kvs(sp, 9);
          compute_spans +=
              sub(attrs.at("code.function.name"), 1).at(0) == "int otlpns::compute(int)";
        }
      }
    }
  }
  EXPECT_EQ(compute_spans, 50);
}

TEST(InstrOtlpExporter, BadConfigurationIsAClearError) {
  auto c = config_for("ftp://127.0.0.1:1");
  EXPECT_FALSE(perfhat::init(c));
  EXPECT_NE(perfhat::last_error().find("must start with http://"), std::string::npos);
  c = config_for("http://127.0.0.1:1");
  c.headers = "novalue";
  EXPECT_FALSE(perfhat::init(c));
  EXPECT_NE(perfhat::last_error().find("expected key=value"), std::string::npos);
  c = config_for("http://127.0.0.1:1");
  c.compression = "brotli";
  EXPECT_FALSE(perfhat::init(c));
  EXPECT_NE(perfhat::last_error().find("unsupported OTLP compression 'brotli'"), std::string::npos)
      << perfhat::last_error();
  EXPECT_EQ(otlpns::compute(2), 4);  // probes disabled, program fine
}

// The encoder caches each probe site's encoded name and code.* attributes per thread. Encoding
// with site ids must give the same bytes as encoding the same spans without (site 0, never
// cached): for repeated sites, interleaved sites, and a site whose strings or line changed size
// (re-encoded, as after a late symbolization), across batches.
TEST(InstrOtlpEncode, SiteCachedFieldsEncodeLikeUncachedOnes) {
  auto span = [](uint32_t site, const std::string& fn, const std::string& file, uint32_t line,
                 uint64_t i) {
    perfhat::SpanData s;
    s.trace_id.fill(static_cast<uint8_t>(i + 1));
    s.span_id = i + 2;
    s.name = fn;
    s.function = fn;
    s.mangled = fn.empty() ? "" : "_Z" + std::to_string(fn.size()) + fn;
    s.file = file;
    s.line = line;
    s.start_unix_ns = 1'763'700'000'000'000'000ULL + i;
    s.end_unix_ns = s.start_unix_ns + 1000 * (i + 1);
    s.site = site;
    return s;
  };
  auto uncached = [](perfhat::ExportBatch b) {
    for (auto& s : b.spans) s.site = 0;
    return perfhat::otlp::traces_protobuf(b);
  };
  perfhat::ExportBatch first;
  first.resource.service_name = "site-cache";
  for (uint64_t i = 0; i < 12; ++i) {
    const uint32_t site = 1 + static_cast<uint32_t>(i % 3);
    first.spans.push_back(span(site, "fn" + std::to_string(site), "/src/a.cc", 10 * site, i));
  }
  EXPECT_EQ(perfhat::otlp::traces_protobuf(first), uncached(first));

  perfhat::ExportBatch second = first;
  second.spans[0] = span(1, "ns::fn1(int)", "/src/a.cc", 10, 0);  // site 1 resolved: longer
  second.spans[1] = span(2, "fn2", "/src/a.cc", 21, 1);           // site 2: another line
  second.spans[2] = span(3, "", "", 0, 2);                        // site 3: nothing known
  second.spans[3] = span(7, "fn7", "/src/b.cc", 70, 3);           // a new site
  EXPECT_EQ(perfhat::otlp::traces_protobuf(second), uncached(second));
  EXPECT_EQ(perfhat::otlp::traces_protobuf(first), uncached(first)) << "and back again";
}

TEST(InstrOtlpEncode, Hex) {
  uint8_t b[] = {0x00, 0xAB, 0xFF};
  EXPECT_EQ(perfhat::otlp::hex(b, 3), "00abff");
}

}  // namespace

namespace reuse {
[[gnu::noinline]] int annotated(int x) {
  PERFHAT_FUNCTION();
  PERFHAT_RESULT_SIZE(x);
  PERFHAT_ATTRIBUTE("tenant", "acme");
  PERFHAT_ERROR();
  return x;
}
[[gnu::noinline]] int plain(int x) {
  PERFHAT_FUNCTION();
  return x + 1;
}
}  // namespace reuse

// The engine turns queued records into the SpanData of one reused batch: a plain span written
// over a slot that held an annotated span must not keep its attributes, size or error.
TEST(InstrOtlpExporter, ReusedBatchSpansCarryNoStaleFields) {
  auto ex = std::make_shared<perfhat::MemoryExporter>();
  perfhat::Config c;
  c.service_name = "reuse-test";
  c.sampler = "full";
  c.batch_size = 2;
  c.export_interval_s = 3600;
  ASSERT_TRUE(perfhat::init(c, ex)) << perfhat::last_error();
  reuse::annotated(5);
  reuse::annotated(6);
  reuse::plain(1);  // second batch of this flush: slot 0, which held annotated(5)
  perfhat::flush();
  reuse::plain(2);
  reuse::plain(3);
  perfhat::flush();
  perfhat::shutdown();
  auto spans = ex->spans();
  ASSERT_EQ(spans.size(), 5u);
  int annotated = 0, plain = 0;
  for (const auto& s : spans) {
    if (s.function == "int reuse::annotated(int)") {
      ++annotated;
      ASSERT_EQ(s.attributes.size(), 1u);
      EXPECT_EQ(s.attributes[0].key, "tenant");
      EXPECT_EQ(s.attributes[0].s, "acme");
      EXPECT_TRUE(s.error);
      EXPECT_GE(s.result_size, 5);
    } else {
      ASSERT_EQ(s.function, "int reuse::plain(int)");
      ++plain;
      EXPECT_TRUE(s.attributes.empty());
      EXPECT_FALSE(s.error);
      EXPECT_EQ(s.result_size, -1);
      EXPECT_EQ(s.mangled, "_ZN5reuse5plainEi");
    }
  }
  EXPECT_EQ(annotated, 2);
  EXPECT_EQ(plain, 3);
}

namespace {

// The aggregate export mode end to end through the real exporter: the body is the JSON of
// docs/aggregate-export.md, sites referenced by index, rows per kind.
TEST(InstrOtlpAggregates, HistogramsArePostedToAggregatesAsJson) {
  Server srv;
  perfhat::Config c;
  c.sampler = "full";
  c.service_name = "agg-svc";
  c.service_version = "2.0";
  c.endpoint = srv.url();
  c.export_mode = "aggregates";
  ASSERT_TRUE(perfhat::init(c)) << perfhat::last_error();
  for (int i = 0; i < 12; ++i) otlpns::compute(i);
  perfhat::shutdown();  // flushes
  std::lock_guard<std::mutex> l(srv.rx.mu);
  EXPECT_TRUE(srv.rx.traces.empty());
  ASSERT_EQ(srv.rx.aggregates.size(), 1u);
  EXPECT_EQ(srv.rx.content_types.back(), "application/json");
  auto j = nlohmann::json::parse(srv.rx.aggregates[0]);
  EXPECT_EQ(j["resource"]["service.name"], "agg-svc");
  EXPECT_EQ(j["resource"]["service.version"], "2.0");
  EXPECT_GT(std::stoull(j["time_unix_nano"].get<std::string>()), 1'700'000'000'000'000'000ull);
  int function_rows = 0, size_rows = 0;
  for (const auto& row : j["rows"]) {
    const auto& site = j["sites"].at(row["site"].get<size_t>());
    if (site["function"] != "int otlpns::compute(int)") continue;
    EXPECT_EQ(site["mangled"], "_ZN6otlpns7computeEi");
    double count = row["zero"].get<double>();
    for (const auto& b : row["bins"]) count += b[1].get<double>();
    EXPECT_EQ(count, 12);
    if (row["kind"] == "function") {
      ++function_rows;
      EXPECT_EQ(row["errors"], 0);
      EXPECT_GT(row["sum"].get<double>(), 0);
      // Every call recorded (full sampler): nothing is marked estimated from samples.
      EXPECT_FALSE(row.contains("sampled_calls")) << row.dump();
    }
    if (row["kind"] == "size") {
      ++size_rows;
      EXPECT_EQ(row["sum"], 66);  // 0 + 1 + ... + 11
      EXPECT_EQ(row["zero"], 1);  // size 0
    }
  }
  EXPECT_EQ(function_rows, 1);
  EXPECT_EQ(size_rows, 1);
}

// Calls recorded at a rate of ¼: the function row's weighted bins count every call, and the row
// says which part is estimated (sampled_calls) and from how many records (sampled_records).
TEST(InstrOtlpAggregates, SampledCallsAreMarkedInTheFunctionRow) {
  Server srv;
  perfhat::Config c;
  c.sampler = "uniform";
  c.sampling_rate = 0.25;
  c.endpoint = srv.url();
  c.export_mode = "aggregates";
  ASSERT_TRUE(perfhat::init(c)) << perfhat::last_error();
  constexpr int kCalls = 20000;
  for (int i = 0; i < kCalls; ++i) otlpns::compute(i);
  perfhat::shutdown();
  std::lock_guard<std::mutex> l(srv.rx.mu);
  double count = 0, sampled_calls = 0, sampled_records = 0;
  for (const auto& body : srv.rx.aggregates) {
    auto j = nlohmann::json::parse(body);
    for (const auto& row : j["rows"]) {
      const auto& site = j["sites"].at(row["site"].get<size_t>());
      if (site["function"] != "int otlpns::compute(int)" || row["kind"] != "function") continue;
      count += row["zero"].get<double>();
      for (const auto& b : row["bins"]) count += b[1].get<double>();
      sampled_calls += row.value("sampled_calls", 0.0);
      sampled_records += row.value("sampled_records", 0.0);
    }
  }
  EXPECT_NEAR(count / kCalls, 1.0, 0.1);   // Horvitz-Thompson: ~5000 records × 4
  EXPECT_DOUBLE_EQ(sampled_calls, count);  // every record had weight 4
  EXPECT_DOUBLE_EQ(sampled_records * 4, sampled_calls);
  EXPECT_LT(sampled_records, kCalls * 0.4);
}

}  // namespace

// Spans lost after their retries are not only counted: the next POST /v1/aggregates carries
// them in "dropped" (docs/aggregate-export.md) for the handler to store and show, once.
TEST(InstrOtlpExporter, LostSpansAreReportedInTheNextAggregatesRequest) {
  Server srv(400);  // refuses spans (permanent: no retry)
  auto c = config_for(srv.url());
  c.protocol = "http/json";
  ASSERT_TRUE(perfhat::init(c)) << perfhat::last_error();
  const auto before = perfhat::counters().spans_dropped_export;  // cumulative across init()s
  for (int i = 0; i < 3; ++i) otlpns::compute(i);
  perfhat::flush();
  const auto lost = perfhat::counters().spans_dropped_export - before;
  ASSERT_GE(lost, 3u);
  {
    std::lock_guard<std::mutex> l(srv.rx.mu);
    EXPECT_TRUE(srv.rx.aggregates.empty());  // nothing to report before the loss
  }
  srv.traces_status = 200;
  otlpns::compute(9);
  perfhat::flush();
  perfhat::flush();  // reported once: not again
  perfhat::shutdown();
  std::lock_guard<std::mutex> l(srv.rx.mu);
  ASSERT_EQ(srv.rx.aggregates.size(), 1u);
  auto j = nlohmann::json::parse(srv.rx.aggregates[0]);
  ASSERT_TRUE(j.contains("dropped")) << srv.rx.aggregates[0];
  EXPECT_EQ(j["dropped"]["spans"], std::to_string(lost));
  EXPECT_EQ(j["dropped"]["rows"], "0");
  EXPECT_DOUBLE_EQ(j["dropped"]["calls"].get<double>(), static_cast<double>(lost));  // full
  EXPECT_TRUE(j["rows"].empty());
}

// perfhat-handler serves /v1/traces and /v1/aggregates only (DESIGN §5): nothing goes to
// /v1/metrics unless asked for.
TEST(InstrOtlpExporter, NoMetricsPostsByDefault) {
  Server srv;
  ASSERT_TRUE(perfhat::init(config_for(srv.url()))) << perfhat::last_error();
  for (int i = 0; i < 3; ++i) otlpns::compute(i);
  perfhat::shutdown();
  std::lock_guard<std::mutex> l(srv.rx.mu);
  EXPECT_FALSE(srv.rx.traces.empty());
  EXPECT_TRUE(srv.rx.metrics.empty());
}

// A receiver without /v1/aggregates (an OTel Collector): asked once, then not again; the rows
// it could not take are counted.
TEST(InstrOtlpExporter, ReceiverWithoutAggregatesIsAskedOnce) {
  httplib::Server srv;
  std::atomic<int> aggregate_posts{0};
  srv.Post("/v1/traces", [](const httplib::Request&, httplib::Response& r) { r.status = 200; });
  srv.set_logger([&](const httplib::Request& q, const httplib::Response&) {
    if (q.path == "/v1/aggregates") ++aggregate_posts;
  });
  const int port = srv.bind_to_any_port("127.0.0.1");
  std::thread th([&] { srv.listen_after_bind(); });
  for (int i = 0; i < 2000 && !srv.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  auto c = config_for("http://127.0.0.1:" + std::to_string(port));
  c.export_mode = "aggregates";
  ASSERT_TRUE(perfhat::init(c)) << perfhat::last_error();
  const auto before = perfhat::counters().histogram_rows_dropped;
  otlpns::compute(1);
  perfhat::flush();
  otlpns::compute(2);
  perfhat::flush();
  perfhat::shutdown();
  srv.stop();
  th.join();
  EXPECT_EQ(aggregate_posts.load(), 1);
  EXPECT_GE(perfhat::counters().histogram_rows_dropped - before, 2u);
}

namespace {

// A process running a variant (docs/plan.md) labels every export with its release, variant and
// replica: OTLP resource attributes (JSON and protobuf) and the aggregate body's resource.
TEST(InstrOtlpEncode, VariantTravelsWithEveryEncoding) {
  perfhat::ExportBatch b;
  b.resource.service_name = "svc";
  b.resource.release = "r7";
  b.resource.variant = "3";
  b.resource.replica = "11";
  auto j = nlohmann::json::parse(perfhat::otlp::traces_json(b));
  std::map<std::string, std::string> attrs;
  for (const auto& a : j["resourceSpans"][0]["resource"]["attributes"]) {
    attrs[a["key"]] = a["value"]["stringValue"];
  }
  EXPECT_EQ(attrs["perfhat.release"], "r7");
  EXPECT_EQ(attrs["perfhat.variant"], "3");
  EXPECT_EQ(attrs["perfhat.replica"], "11");
  std::string pb = perfhat::otlp::traces_protobuf(b);
  for (const char* s : {"perfhat.release", "r7", "perfhat.variant", "perfhat.replica", "11"}) {
    EXPECT_NE(pb.find(s), std::string::npos) << s;
  }
  auto agg = nlohmann::json::parse(perfhat::otlp::aggregates_json(b));
  EXPECT_EQ(agg["resource"]["perfhat.release"], "r7");
  EXPECT_EQ(agg["resource"]["perfhat.variant"], "3");
  EXPECT_EQ(agg["resource"]["perfhat.replica"], "11");
  b.resource.release.clear();  // no variant: no attribute at all
  b.resource.variant.clear();
  b.resource.replica.clear();
  EXPECT_EQ(perfhat::otlp::traces_json(b).find("perfhat.release"), std::string::npos);
  EXPECT_EQ(perfhat::otlp::aggregates_json(b).find("perfhat.variant"), std::string::npos);
}

}  // namespace
