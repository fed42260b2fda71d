#include "feedback-handler/ingest/aggregate_rows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "common/test_units.h"
#include "feedback-handler/ingest/aggregator.h"

namespace perfhat::handler {
namespace {

using perfhat::test_units::kT0;
constexpr int64_t kMinute = static_cast<int64_t>(kT0 / 60'000'000'000ULL);

int bin(double v) { return static_cast<int>(std::ceil(std::log(v) / std::log(1.01 / 0.99))); }

otlp::Attributes code(const std::string& function, const std::string& mangled, int line) {
  return {{"code.function.name", function},
          {"code.function.mangled", mangled},
          {"code.file.path", std::string("/src/app.cc")},
          {"code.line.number", int64_t{line}}};
}

// The spans libperfhat would export for one request: GET /tasks (1000 ns) calling
// Repo::load twice (100 ns, 300 ns, results of 4 and 6 rows, one loop of 7 iterations).
otlp::ExportRequest spans() {
  otlp::ExportRequest r;
  r.resources.push_back({{"service.name", std::string("agile")},
                         {"service.version", std::string("1.0")},
                         {"host.name", std::string("h1")}});
  auto span = [&](const std::string& id, const std::string& parent, uint64_t dur,
                  otlp::Attributes attrs, const std::string& name) {
    otlp::Span s;
    s.trace_id = std::string(16, 'T');
    s.span_id = std::string(7, 'S') + id;
    if (!parent.empty()) s.parent_span_id = std::string(7, 'S') + parent;
    s.name = name;
    s.start_unix_nano = kT0;
    s.end_unix_nano = kT0 + dur;
    s.attributes = std::move(attrs);
    r.spans.push_back(std::move(s));
  };
  span("r", "", 1000, code("void Api::tasks()", "_ZN3Api5tasksEv", 42), "GET /tasks");
  auto load = code("int Repo::load(int)", "_ZN4Repo4loadEi", 7);
  auto first = load;
  first.emplace_back("perfhat.result.size", int64_t{4});
  first.emplace_back("perfhat.loop.iterations", int64_t{7});
  first.emplace_back("perfhat.loop.line", int64_t{9});
  span("a", "r", 100, first, "int Repo::load(int)");
  load.emplace_back("perfhat.result.size", int64_t{6});
  span("b", "r", 300, load, "int Repo::load(int)");
  return r;
}

// The same request as libperfhat's aggregate export sends it.
std::string rows() {
  using nlohmann::json;
  auto row = [](const char* kind, int site, json bins, double sum) {
    return json{{"kind", kind}, {"site", site}, {"minute", kMinute}, {"bins", bins}, {"sum", sum}};
  };
  json body = {
      {"resource", {{"service.name", "agile"}, {"service.version", "1.0"}, {"host.name", "h1"}}},
      {"time_unix_nano", std::to_string(kT0 + 1000)},
      {"sites",
       {{{"name", "GET /tasks"},
         {"function", "void Api::tasks()"},
         {"mangled", "_ZN3Api5tasksEv"},
         {"file", "/src/app.cc"},
         {"line", 42}},
        {{"name", "int Repo::load(int)"},
         {"function", "int Repo::load(int)"},
         {"mangled", "_ZN4Repo4loadEi"},
         {"file", "/src/app.cc"},
         {"line", 7}}}}};
  json loads = json::array({json::array({bin(100), 1}), json::array({bin(300), 1})});
  body["rows"].push_back(row("function", 0, json::array({json::array({bin(1000), 1})}), 1000));
  body["rows"].back()["errors"] = 0;
  body["rows"].push_back(row("function", 1, loads, 400));
  body["rows"].push_back(row("callsite", 1, loads, 400));
  body["rows"].back()["caller"] = 0;
  body["rows"].back()["parents"] = 1;
  body["rows"].push_back(
      row("size", 1, json::array({json::array({bin(4), 1}), json::array({bin(6), 1})}), 10));
  body["rows"].push_back(row("loop", 1, json::array({json::array({bin(7), 1})}), 7));
  body["rows"].back()["line"] = 9;
  // Self time: the request's 1000 ns less its two children's 100 + 300; the loads are leaves.
  body["rows"].push_back(row("self", 0, json::array({json::array({bin(600), 1})}), 600));
  body["rows"].push_back(row("self", 1, loads, 400));
  return body.dump();
}

TEST(AggregateRows, GiveTheAggregatesTheSameSpansGive) {
  Batch from_spans, from_rows;
  aggregate(spans(), from_spans);
  AggregateRowsStats st = decodeAggregateRows(rows(), from_rows);
  EXPECT_EQ(st.rows, 7u);
  EXPECT_EQ(st.skipped, 0u);
  ASSERT_EQ(from_rows.aggregates.size(), from_spans.aggregates.size());
  for (const auto& [key, want] : from_spans.aggregates) {
    auto it = from_rows.aggregates.find(key);
    ASSERT_NE(it, from_rows.aggregates.end())
        << static_cast<char>(key.kind) << " " << key.key << " <- " << key.sub;
    const AggValue& got = it->second;
    EXPECT_EQ(got.sketch.count(), want.sketch.count()) << key.key;
    EXPECT_DOUBLE_EQ(got.sketch.sum(), want.sketch.sum()) << key.key;
    // Same bins; quantiles are clamped to [min, max], which spans know exactly and rows only
    // to their bins (docs/aggregate-export.md): equal within the sketch's 1 %.
    for (double q : {0.5, 0.9, 0.99}) {
      EXPECT_NEAR(got.sketch.quantile(q), want.sketch.quantile(q), 0.01 * want.sketch.quantile(q))
          << key.key << " " << q;
    }
    EXPECT_NEAR(got.sketch.max(), want.sketch.max(), 0.01 * want.sketch.max()) << key.key;
    EXPECT_EQ(got.x1, want.x1) << key.key;
    EXPECT_EQ(got.line, want.line) << key.key;
  }
  ASSERT_EQ(from_rows.functions.size(), 2u);
  for (const auto& [key, info] : from_spans.functions) {
    const FunctionInfo& f = from_rows.functions.at(key);
    EXPECT_EQ(f.mangled, info.mangled);
    EXPECT_EQ(f.file, info.file);
    EXPECT_EQ(f.line, info.line);
  }
  EXPECT_EQ(from_rows.hosts.size(), from_spans.hosts.size());
}

TEST(AggregateRows, WeightedCountsAndMergesWithWhatTheBatchHolds) {
  Batch batch;
  decodeAggregateRows(
      R"J({"sites":[{"name":"f","function":"void f()"}],
          "rows":[{"kind":"function","site":0,"minute":5,"bins":[[300,2.5]],"sum":10,
                   "zero":1.5,"errors":0.5}]})J",
      batch);
  decodeAggregateRows(
      R"J({"sites":[{"name":"f","function":"void f()"}],
          "rows":[{"kind":"function","site":0,"minute":5,"bins":[[301,1]],"sum":4}]})J",
      batch);
  ASSERT_EQ(batch.aggregates.size(), 1u);
  const AggValue& v = batch.aggregates.begin()->second;
  EXPECT_EQ(v.sketch.count(), 5);  // 2.5 + 1.5 zeros + 1
  EXPECT_EQ(v.sketch.sum(), 14);
  EXPECT_EQ(v.x1, 0.5);
  EXPECT_EQ(batch.aggregates.begin()->first.bucket, 5);
}

TEST(AggregateRows, RowsOfSitesWithoutIdentityAreSkippedNotFatal) {
  Batch batch;
  AggregateRowsStats st = decodeAggregateRows(
      R"({"sites":[{},{"name":"g"}],
          "rows":[{"kind":"function","site":0,"bins":[[10,1]]},
                  {"kind":"function","site":1,"bins":[[10,1]]},
                  {"kind":"callsite","site":1,"caller":0,"bins":[[10,1]]},
                  {"kind":"size","site":1,"bins":[]}]})",
      batch);
  EXPECT_EQ(st.rows, 1u);
  EXPECT_EQ(st.skipped, 2u);  // the empty size row adds nothing and is not an error
  EXPECT_EQ(batch.aggregates.size(), 1u);
}

TEST(AggregateRows, MalformedBodiesAreRefusedWholeNamingTheMember) {
  const std::string valid_site = R"("sites":[{"name":"f"}])";
  struct Case {
    std::string body, mentions;
  };
  const Case cases[] = {
      {"not json", "not valid JSON"},
      {"[1,2]", "JSON object"},
      {R"({"resource":"x"})", "resource"},
      {R"({"resource":{"service.name":5}})", "service.name"},
      {R"({"time_unix_nano":-4})", "time_unix_nano"},
      {R"({"time_unix_nano":"12a"})", "time_unix_nano"},
      {R"({"sites":{}})", "sites"},
      {R"({"sites":[{"line":"x"}]})", "sites[0].line"},
      {"{" + valid_site + R"(,"rows":{}})", "rows"},
      {"{" + valid_site + R"(,"rows":[{"kind":"span","site":0}]})", "rows[0].kind"},
      {"{" + valid_site + R"(,"rows":[{"kind":"function"}]})", "rows[0].site"},
      {"{" + valid_site + R"(,"rows":[{"kind":"function","site":1}]})", "rows[0].site"},
      {"{" + valid_site + R"(,"rows":[{"kind":"callsite","site":0}]})", "rows[0].caller"},
      {"{" + valid_site + R"(,"rows":[{"kind":"function","site":0,"bins":[[1]]}]})", "bins"},
      {"{" + valid_site + R"(,"rows":[{"kind":"function","site":0,"bins":[[1.5,1]]}]})", "bins"},
      {"{" + valid_site + R"(,"rows":[{"kind":"function","site":0,"bins":[[200000,1]]}]})",
       "index out of range"},
      {"{" + valid_site + R"(,"rows":[{"kind":"function","site":0,"bins":[[5,-1]]}]})", "rows[0]"},
      {"{" + valid_site + R"(,"rows":[{"kind":"function","site":0,"sum":-1}]})", "rows[0].sum"},
      {"{" + valid_site + R"(,"rows":[{"kind":"function","site":0,"zero":"1"}]})", "rows[0].zero"},
      {R"({"rows":[{"kind":"function","site":0}]})", "no sites"},
  };
  for (const Case& c : cases) {
    Batch batch;
    batch.meta["kept"] = 1;
    // A good row first: nothing of a refused body may reach the batch.
    std::string body = c.body;
    try {
      decodeAggregateRows(body, batch);
      ADD_FAILURE() << "accepted: " << body;
    } catch (const AggregateRowsError& e) {
      EXPECT_NE(std::string(e.what()).find(c.mentions), std::string::npos)
          << e.what() << " for " << body;
    }
    EXPECT_TRUE(batch.aggregates.empty()) << body;
    EXPECT_EQ(batch.meta.size(), 1u);
  }
  // All or nothing: a valid row before a bad one is not kept either.
  Batch batch;
  EXPECT_THROW(decodeAggregateRows("{" + valid_site +
                                       R"(,"rows":[{"kind":"function","site":0,"bins":[[5,1]]},
                                                  {"kind":"function","site":0,"bins":[[5,0]]}]})",
                                   batch),
               AggregateRowsError);
  EXPECT_TRUE(batch.aggregates.empty());
}

// Numbers and names beyond the intake limits, and times outside the store's window, are refused
// whole with the member and the limit named; a body nested 200,000 deep is a clear error.
TEST(AggregateRows, ValuesBeyondTheIntakeLimitsAreRefusedNamingTheMember) {
  const std::string site = R"("sites":[{"name":"f"}])";
  const std::string huge(10 << 20, 'x');
  const TimeBounds bounds = acceptedTimes(static_cast<int64_t>(kT0), 30 * 24 * 60);
  const std::string at = R"("minute":)" + std::to_string(kMinute) + ",";
  struct Case {
    std::string body, mentions;
  };
  const Case cases[] = {
      {R"({"resource":{"service.name":")" + huge + R"("}})", "longer than 256 bytes"},
      {R"({"sites":[{"name":")" + huge + R"("}]})", "sites[0].name is longer than 4096"},
      {R"({"sites":[{"file":")" + std::string(5000, 'f') + R"("}]})", "sites[0].file"},
      {"{" + site + R"(,"rows":[{"kind":"function","site":0,)" + at + R"("bins":[[5,1e19]]}]})",
       "1e18"},
      {"{" + site + R"(,"rows":[{"kind":"function","site":0,)" + at +
           R"("bins":[[5,1e308],[6,1e308]]}]})",
       "rows[0]"},
      {"{" + site + R"(,"rows":[{"kind":"function","site":0,)" + at +
           R"("bins":[[5,1]],"sum":1e308}]})",
       "rows[0].sum"},
      {"{" + site + R"(,"rows":[{"kind":"function","site":0,)" + at +
           R"("bins":[[5,1]],"errors":1e300}]})",
       "rows[0].errors"},
      {"{" + site + R"(,"rows":[{"kind":"function","site":0,"minute":0,"bins":[[5,1]]}]})",
       "rows[0].minute is outside the accepted window"},
      {"{" + site + R"(,"rows":[{"kind":"function","site":0,"minute":)" +
           std::to_string(kMinute + 60 * 24 * 365 * 500) + R"(,"bins":[[5,1]]}]})",
       "rows[0].minute is outside"},
      {R"({"time_unix_nano":"18000000000000000000"})", "time_unix_nano"},
      {R"({"time_unix_nano":1000})", "time_unix_nano is outside the accepted window"},
      {std::string(200000, '[') + std::string(200000, ']'), "nested deeper than"},
      {R"({"rows":)" + std::string(200000, '['), "body is"},
  };
  for (const Case& c : cases) {
    Batch batch;
    try {
      decodeAggregateRows(c.body, batch, &bounds);
      ADD_FAILURE() << "accepted: " << c.body.substr(0, 200);
    } catch (const AggregateRowsError& e) {
      EXPECT_NE(std::string(e.what()).find(c.mentions), std::string::npos)
          << e.what() << " for " << c.body.substr(0, 200);
    }
    EXPECT_TRUE(batch.aggregates.empty());
  }
  // Within the window (and the clock-skew allowance ahead), a row is taken.
  Batch batch;
  decodeAggregateRows("{" + site + R"(,"time_unix_nano":)" + std::to_string(kT0) +
                          R"(,"rows":[{"kind":"function","site":0,"minute":)" +
                          std::to_string(kMinute + 5) + R"(,"bins":[[5,1]]}]})",
                      batch, &bounds);
  EXPECT_EQ(batch.aggregates.size(), 1u);
}

// `dropped` (docs/aggregate-export.md) is what the library lost: charged to the service in the
// minute of the report, never to a function, and refused whole when malformed.
TEST(AggregateRows, LossesAreChargedToTheServiceInTheMinuteOfTheReport) {
  const std::string body = R"({"resource":{"service.name":"svc","service.version":"2"},
      "time_unix_nano":"1795912345000000000",
      "dropped":{"calls":2048.5,"spans":"2048","rows":1}})";
  Batch batch;
  const AggregateRowsStats st = decodeAggregateRows(body, batch);
  EXPECT_EQ(st.rows, 0u);
  EXPECT_EQ(st.dropped_calls, 2048.5);
  ASSERT_EQ(batch.aggregates.size(), 1u);
  const auto& [k, v] = *batch.aggregates.begin();
  EXPECT_EQ(k.kind, AggKind::kDropped);
  EXPECT_EQ(k.key, "");
  EXPECT_EQ(k.service, "svc");
  EXPECT_EQ(k.version, "2");
  EXPECT_EQ(k.bucket, 1795912345000000000 / kBucketNs);
  EXPECT_EQ(v.x1, 2048.5);
  EXPECT_EQ(v.x2, 2048);
  EXPECT_EQ(v.x3, 1);
  EXPECT_TRUE(batch.functions.empty());

  for (const char* bad :
       {R"({"time_unix_nano":"1","dropped":[1]})",
        R"({"time_unix_nano":"1","dropped":{"calls":-1}})",
        R"({"time_unix_nano":"1","dropped":{"spans":"x"}})", R"({"dropped":{"calls":5}})"}) {
    Batch untouched;
    EXPECT_THROW(decodeAggregateRows(bad, untouched), AggregateRowsError) << bad;
    EXPECT_TRUE(untouched.aggregates.empty()) << bad;
  }
}

}  // namespace
}  // namespace perfhat::handler
