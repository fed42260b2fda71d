// The inter-handler export as a local handler parses it from an upstream (export_json.h): deep
// nesting is a clear error, oversized names are left out and counted, out-of-range numbers read
// clamped, and a sketch with out-of-range totals still reads.
#include "feedback-handler/sync/export_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/crc32.h"
#include "feedback-handler/util/base64.h"

namespace perfhat::handler {
namespace {

using nlohmann::json;

json row(const std::string& key, const std::string& sketch) {
  return {{"kind", "f"},      {"key", key},     {"sub", ""}, {"bucket", 29'395'000},
          {"service", "s"},   {"version", "1"}, {"env", ""}, {"origin", "up"},
          {"sketch", sketch}, {"x1", 0},        {"x2", 0},   {"x3", 0},
          {"line", 0}};
}

std::string sketchOf(double v, double w) {
  DDSketch s;
  s.add(v, w);
  return base64Encode(s.serialize());
}

TEST(ExportJson, DeeplyNestedExportsAreAClearError) {
  const std::string open(200000, '['), close(200000, ']');
  for (const std::string& text :
       {open + close, R"({"cursor":"1","aggregates":)" + open + close + "}",
        R"({"cursor":"1","aggregates":[{"kind":"f","key":)" + open + close + "}]}"}) {
    try {
      parseExport(text);
      ADD_FAILURE() << "accepted";
    } catch (const ExportFormatError& e) {
      EXPECT_NE(std::string(e.what()).find("nested deeper than"), std::string::npos) << e.what();
    }
  }
}

TEST(ExportJson, RowsWithOversizedNamesAreLeftOutAndCounted) {
  const std::string huge(10 << 20, 'k');
  json doc = {{"cursor", "7"}, {"more", false}};
  doc["aggregates"] = json::array({row("ok()", sketchOf(5, 1)), row(huge, sketchOf(5, 1))});
  json bad_service = row("svc()", sketchOf(5, 1));
  bad_service["service"] = std::string(300, 's');
  doc["aggregates"].push_back(bad_service);
  doc["functions"] = json::array(
      {{{"key", "ok()"}, {"file", "/a.cc"}}, {{"key", "f()"}, {"file", huge}}, {{"key", huge}}});
  doc["hosts"] = json::array({{{"key", "ok()"}, {"host", "h"}}, {{"key", "ok()"}, {"host", huge}}});
  ExportPage p = parseExport(doc.dump());
  EXPECT_EQ(p.cursor, 7u);
  ASSERT_EQ(p.rows.aggregates.size(), 1u);
  EXPECT_EQ(p.rows.aggregates.begin()->first.key, "ok()");
  EXPECT_EQ(p.rows.functions.size(), 1u);
  EXPECT_EQ(p.rows.hosts.size(), 1u);
  EXPECT_EQ(p.rejected, 5u);
}

TEST(ExportJson, NumbersOutOfRangeReadClamped) {
  // A sketch an upstream stored before totals were bounded: weight 1e308 made its sum infinite.
  std::string blob = "DDS1";
  auto putDouble = [&](double v) { blob.append(reinterpret_cast<const char*>(&v), 8); };
  putDouble(0.01);
  blob += static_cast<char>(0x80);  // max_bins 2048 as a varint
  blob += static_cast<char>(0x10);
  const double inf = std::numeric_limits<double>::infinity();
  for (double v : {0.0, 1e308, inf, 1e6, 1e6}) putDouble(v);
  blob += static_cast<char>(1);     // one bin
  blob += static_cast<char>(0xb6);  // index 691, zigzag (1382) as a varint
  blob += static_cast<char>(0x0a);
  blob += static_cast<char>(1);  // a raw double count
  putDouble(1e308);
  const uint32_t crc = crc32(blob);
  blob.append(reinterpret_cast<const char*>(&crc), 4);

  json r = row("f()", base64Encode(blob));
  r["x1"] = 1e308;
  r["x2"] = -5;
  json doc = {{"cursor", "1"}, {"aggregates", json::array({r})}};
  ExportPage p = parseExport(doc.dump());
  ASSERT_EQ(p.rows.aggregates.size(), 1u);
  const AggValue& v = p.rows.aggregates.begin()->second;
  EXPECT_EQ(v.sketch.count(), DDSketch::kMaxCount);
  EXPECT_TRUE(std::isfinite(v.sketch.sum()));
  EXPECT_EQ(v.x1, DDSketch::kMaxCount);
  EXPECT_EQ(v.x2, 0);
  // And it serializes into an export that parses back the same.
  ExportPage again = parseExport(serializeExport(p));
  EXPECT_EQ(again.rows.aggregates.begin()->second.sketch, v.sketch);
}

// Exporter losses travel to local handlers in their own member, which handlers that predate it
// ignore, so a newer upstream never breaks an older local handler's sync.
TEST(ExportJson, ExporterLossesRoundTripInTheirOwnMember) {
  ExportPage page;
  page.cursor = 7;
  AggValue lost;
  lost.x1 = 2048;
  lost.x2 = 2048;
  lost.x3 = 3;
  page.rows.aggregates[AggKey{AggKind::kDropped, "", "", 29'395'000, "svc", "1", "prod", ""}] =
      lost;
  const std::string text = serializeExport(page);
  const json doc = json::parse(text);
  EXPECT_TRUE(doc["aggregates"].empty()) << text;
  ASSERT_EQ(doc["dropped"].size(), 1u) << text;

  const ExportPage back = parseExport(text);
  ASSERT_EQ(back.rows.aggregates.size(), 1u);
  const auto& [k, v] = *back.rows.aggregates.begin();
  EXPECT_EQ(k.kind, AggKind::kDropped);
  EXPECT_EQ(k.key, "");
  EXPECT_EQ(k.service, "svc");
  EXPECT_EQ(k.bucket, 29'395'000);
  EXPECT_EQ(v.x1, 2048);
  EXPECT_EQ(v.x2, 2048);
  EXPECT_EQ(v.x3, 3);
}

// Variant traffic (exposure, issue 23) travels in a member of its own: a local handler that
// predates it ignores it instead of refusing the page for an unknown aggregate kind.
TEST(ExportJson, VariantTrafficRoundTripsInItsOwnMember) {
  ExportPage page;
  page.cursor = 9;
  AggValue served;
  served.x1 = 300;
  served.x2 = 4500;
  page.rows.aggregates[AggKey{AggKind::kTraffic, "", "r1|2|5", 29'395'000, "svc", "1", "", ""}] =
      served;
  const std::string text = serializeExport(page);
  const json doc = json::parse(text);
  EXPECT_TRUE(doc["aggregates"].empty()) << text;
  ASSERT_EQ(doc["traffic"].size(), 1u) << text;
  const ExportPage back = parseExport(text);
  ASSERT_EQ(back.rows.aggregates.size(), 1u);
  const auto& [k, v] = *back.rows.aggregates.begin();
  EXPECT_EQ(k.kind, AggKind::kTraffic);
  EXPECT_EQ(k.sub, "r1|2|5");
  EXPECT_EQ(v.x1, 300);
  EXPECT_EQ(v.x2, 4500);
}

// "Estimated from samples" rows travel in their own member, which older handlers ignore (an
// unknown aggregate kind would stop their sync).
TEST(ExportJson, SampledRowsRoundTripInTheirOwnMember) {
  ExportPage page;
  page.cursor = 9;
  AggValue v;
  v.x1 = 5000;
  v.x2 = 500;
  page.rows.aggregates[AggKey{AggKind::kSampled, "f()", "", 29'395'000, "svc", "1", "", ""}] = v;
  const std::string text = serializeExport(page);
  const json doc = json::parse(text);
  EXPECT_TRUE(doc["aggregates"].empty()) << text;
  ASSERT_EQ(doc["sampled"].size(), 1u) << text;
  const ExportPage back = parseExport(text);
  ASSERT_EQ(back.rows.aggregates.size(), 1u);
  const auto& [k, b] = *back.rows.aggregates.begin();
  EXPECT_EQ(k.kind, AggKind::kSampled);
  EXPECT_EQ(k.key, "f()");
  EXPECT_EQ(k.bucket, 29'395'000);
  EXPECT_EQ(b.x1, 5000);
  EXPECT_EQ(b.x2, 500);
}

// Self-time rows (kind t, dynamic metrics) travel to local handlers like the others; an unknown
// kind is still refused.
TEST(ExportJson, SelfTimeRowsAreCarried) {
  json doc = {{"cursor", "3"}, {"more", false}};
  json self = row("f()", sketchOf(40, 2));
  self["kind"] = "t";
  doc["aggregates"] = json::array({self});
  const ExportPage page = parseExport(doc.dump());
  ASSERT_EQ(page.rows.aggregates.size(), 1u);
  const auto& [k, v] = *page.rows.aggregates.begin();
  EXPECT_EQ(k.kind, AggKind::kSelfTime);
  EXPECT_EQ(v.sketch.count(), 2);
  doc["aggregates"][0]["kind"] = "q";
  EXPECT_THROW(parseExport(doc.dump()), ExportFormatError);
}

}  // namespace
}  // namespace perfhat::handler
