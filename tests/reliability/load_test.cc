// Reliability suite, load (issue #19): N keep-alive exporters at a fixed rate with concurrent
// readers, on the default settings; and /healthz with 100 slow connections open.
// Asserted: nothing lost, nothing refused or dropped, every read served while exporters are
// busy, health answered. Recorded (never asserted): throughput, read latency p50/p99, memory
// over the run.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tests/integration/handler_process.h"
#include "tests/reliability/exporters.h"
#include "tests/reliability/raw_http.h"

namespace perfhat::reliability {
namespace {

using testing::HandlerProcess;
using testing::TempDir;
using namespace std::chrono_literals;

constexpr const char* kToken = "t";
constexpr int kExporters = 12;
constexpr int kBatchesPerSecond = 10;  // per exporter
constexpr size_t kSpansPerLoadBatch = 100;
constexpr int kFunctions = 200;
constexpr int kReaders = 2;
constexpr size_t kKeysPerRead = 100;  // one translation unit's worth

std::string loadKey(int f) { return "rel::load_fn" + std::to_string(f); }

// An editor-like reader: batchGets of kKeysPerRead keys every 20 ms until `end`.
// With `nodelay` false, the client keeps cpp-httplib's default (Nagle's algorithm on), as other
// HTTP clients may: its request head and body go out in two writes, and the second waits for the
// handler's delayed ACK (perfhat-lsp's HttpSource sets TCP_NODELAY).
void readUntil(const std::string& url, const std::vector<std::string>& keys, int r,
               Clock::time_point end, Latencies& reads, std::atomic<uint64_t>& failures,
               bool nodelay = true) {
  auto c = testing::client(url, kToken);
  c.set_keep_alive(true);
  c.set_tcp_nodelay(nodelay);
  for (int i = 0; Clock::now() < end; ++i) {
    BatchGetRequest req;
    for (size_t k = 0; k < kKeysPerRead; ++k) {
      req.keys.push_back(keys[(static_cast<size_t>(r * 31 + i) * 13 + k) % keys.size()]);
    }
    auto t = Clock::now();
    auto res = c.Post("/v1/feedback:batchGet", serialize(req), "application/json");
    if (res && res->status == 200) {
      reads.add(msSince(t));
    } else {
      ++failures;
    }
    std::this_thread::sleep_for(20ms);  // an editor's pace, not a benchmark loop
  }
}

// kReaders readers for `duration`, with no other load (the baseline).
void readFor(const std::string& url, const std::vector<std::string>& keys,
             std::chrono::seconds duration, Latencies& reads, std::atomic<uint64_t>& failures,
             bool nodelay) {
  std::vector<std::thread> readers;
  readers.reserve(kReaders);
  const auto end = Clock::now() + duration;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&, r] { readUntil(url, keys, r, end, reads, failures, nodelay); });
  }
  for (auto& t : readers) t.join();
}

TEST(Load, ExportersAtFixedRateWithConcurrentReaders) {
  TempDir dir("rel-load");
  HandlerProcess h({"--mode", "deployed", "--store", dir / "l.sqlite", "--token", kToken});
  std::vector<std::string> keys;
  std::vector<std::atomic<uint64_t>> expected(kFunctions);
  // Spans of requests that got no answer: stored or not, the exporter cannot know.
  std::vector<std::atomic<uint64_t>> uncertain(kFunctions);
  {
    auto c = testing::client(h.url(), kToken);
    for (int f = 0; f < kFunctions; ++f) {
      keys.push_back(loadKey(f));
      auto res = c.Post("/v1/traces", batchBody(keys.back(), static_cast<uint64_t>(f)),
                        "application/x-protobuf");
      ASSERT_TRUE(res && res->status == 200);
      expected[static_cast<size_t>(f)] = kSpansPerBatch;
    }
  }
  // Baseline in the same run: the same readers with no exporters.
  Latencies idle_reads, nagle_reads;
  std::atomic<uint64_t> idle_failures{0};
  readFor(h.url(), keys, 2s, idle_reads, idle_failures, /*nodelay=*/true);
  readFor(h.url(), keys, 2s, nagle_reads, idle_failures, /*nodelay=*/false);
  const double seconds = loadSeconds(6);
  const auto t0 = Clock::now();
  const auto end =
      t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::atomic<uint64_t> acked_batches{0}, rejected{0}, dropped{0}, late{0};
  // Batches acknowledged to each exporter while the run lasted (an exporter whose connection
  // never gets a worker thread is starved, however fast the others go).
  std::vector<std::atomic<uint64_t>> acked_in_run(kExporters);
  std::vector<std::thread> threads;
  threads.reserve(kExporters + kReaders);
  for (int e = 0; e < kExporters; ++e) {
    threads.emplace_back([&, e] {
      auto c = testing::client(h.url(), kToken);  // one keep-alive connection per exporter
      c.set_keep_alive(true);
      const auto period = std::chrono::microseconds(1'000'000 / kBatchesPerSecond);
      auto next = t0 + period * e / kExporters;  // spread the exporters over one period
      for (int i = 0; Clock::now() < end; ++i) {
        std::this_thread::sleep_until(next);
        next += period;
        const int f = (e * 17 + i) % kFunctions;
        const uint64_t seed = static_cast<uint64_t>(e) * 7919 + static_cast<uint64_t>(i);
        auto lat = testing::lognormalLatencies(kSpansPerLoadBatch, seed);
        auto res =
            c.Post("/v1/traces", otlp::encodeProtobuf(testing::spansFor(loadKey(f), lat, seed)),
                   "application/x-protobuf");
        if (!res) {
          ++dropped;
          uncertain[static_cast<size_t>(f)] += kSpansPerLoadBatch;
        } else if (res->status == 200) {
          ++acked_batches;
          expected[static_cast<size_t>(f)] += kSpansPerLoadBatch;
          if (Clock::now() < end) ++acked_in_run[static_cast<size_t>(e)];
        } else {
          ++rejected;
        }
        if (Clock::now() > next) ++late;  // the rate was not held for this batch
      }
    });
  }
  Latencies reads;
  std::atomic<uint64_t> read_failures{0};
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&, r] { readUntil(h.url(), keys, r, end, reads, read_failures); });
  }
  std::vector<long> rss;  // sampled every 250 ms
  while (Clock::now() < end) {
    rss.push_back(processMemory(h.pid()).rss_kb);
    std::this_thread::sleep_for(250ms);
  }
  for (auto& t : threads) t.join();
  const double elapsed = msSince(t0) / 1000.0;
  const Memory mem = processMemory(h.pid());

  // Nothing lost: every function has the spans acknowledged for it, and at most those of the
  // requests that went unanswered on top.
  auto c = testing::client(h.url(), kToken);
  BatchGetResponse all = testing::batchGet(c, keys);
  size_t lost = all.missing.size();
  std::string first_loss;
  for (const auto& item : all.items) {
    const int f = std::atoi(item.key.c_str() + std::string("rel::load_fn").size());
    const uint64_t acked = expected[static_cast<size_t>(f)];
    if (item.stats->count < acked ||
        item.stats->count > acked + uncertain[static_cast<size_t>(f)]) {
      ++lost;
      if (first_loss.empty()) {
        first_loss = item.key + ": " + std::to_string(item.stats->count) + " spans, acknowledged " +
                     std::to_string(expected[static_cast<size_t>(f)].load());
      }
    }
  }
  // Memory "flat": after the first quarter (warm-up), compare the rest's start and end.
  const size_t q = rss.size() / 4;
  const long rss_warm = rss.empty() ? -1 : rss[q];
  const long rss_end = rss.empty() ? -1 : rss.back();
  int starved = 0;
  uint64_t least = UINT64_MAX;
  for (const auto& n : acked_in_run) {
    starved += n.load() == 0;
    least = std::min<uint64_t>(least, n.load());
  }
  const double offered = kExporters * kBatchesPerSecond * static_cast<double>(kSpansPerLoadBatch);
  record({{"kind", "load"},
          {"store", "SQLite (defaults)"},
          {"seconds", elapsed},
          {"exporters", kExporters},
          {"offered_spans_per_s", offered},
          {"accepted_spans_per_s",
           static_cast<double>(acked_batches.load() * kSpansPerLoadBatch) / elapsed},
          {"batches_acked", acked_batches.load()},
          {"batches_late", late.load()},
          {"exporters_starved", starved},
          {"least_batches_one_exporter", least},
          {"rejected", rejected.load()},
          {"dropped", dropped.load()},
          {"lost_keys", lost},
          {"readers", kReaders},
          {"keys_per_read", kKeysPerRead},
          {"reads", reads.count()},
          {"read_failures", read_failures.load()},
          {"idle_read_p50_ms", idle_reads.quantile(0.5)},
          {"idle_read_p99_ms", idle_reads.quantile(0.99)},
          {"idle_nagle_read_p50_ms", nagle_reads.quantile(0.5)},
          {"read_p50_ms", reads.quantile(0.5)},
          {"read_p99_ms", reads.quantile(0.99)},
          {"read_max_ms", reads.max()},
          {"rss_after_warmup_kb", rss_warm},
          {"rss_end_kb", rss_end},
          {"peak_rss_kb", mem.peak_kb}});
  EXPECT_EQ(lost, 0u) << first_loss;
  EXPECT_EQ(rejected.load(), 0u);
  EXPECT_EQ(dropped.load(), 0u);
  EXPECT_EQ(read_failures.load() + idle_failures.load(), 0u);
  EXPECT_GE(reads.count(), 10u) << "readers were not served while exporters were busy";
  EXPECT_EQ(starved, 0) << "exporters never served during the run (their keep-alive "
                           "connections waited for a worker thread)";
}

// 100 clients open a connection each and trickle their request head one byte a second, forever.
// /healthz (and a read) must still be answered meanwhile.
TEST(SlowConnections, HealthzAnswersWith100SlowConnectionsOpen) {
  TempDir dir("rel-slow");
  HandlerProcess h({"--mode", "deployed", "--store", dir / "s.sqlite", "--token", kToken});
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 100; ++i) {
    slow.push_back(std::make_unique<RawConnection>(h.port()));
    slow.back()->send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
  }
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    while (!stop) {
      for (auto& s : slow) s->send("x");
      for (int i = 0; i < 10 && !stop; ++i) std::this_thread::sleep_for(100ms);
    }
  });
  std::this_thread::sleep_for(500ms);  // the handler has accepted them
  Latencies health;
  int answered = 0, probes = faultRounds(10, 50);
  int status = 0;
  auto c = testing::client(h.url());
  c.set_read_timeout(10s);
  for (int i = 0; i < probes; ++i) {
    auto t = Clock::now();
    auto res = c.Get("/healthz");
    status = res ? res->status : 0;
    if (status != 200) break;  // unanswered within 10 s: more probes would only wait as long
    health.add(msSince(t));
    ++answered;
    std::this_thread::sleep_for(100ms);
  }
  auto reader = testing::client(h.url(), kToken);
  reader.set_read_timeout(10s);
  auto read = reader.Post("/v1/feedback:batchGet", R"({"keys":["x"]})", "application/json");
  stop = true;
  trickle.join();
  record({{"kind", "slow_connections"},
          {"connections", slow.size()},
          {"probes", probes},
          {"probes_attempted", answered + (status == 200 ? 0 : 1)},
          {"answered", answered},
          {"healthz_p50_ms", health.quantile(0.5)},
          {"healthz_p99_ms", health.quantile(0.99)},
          {"healthz_max_ms", health.max()},
          {"read_status", read ? read->status : 0},
          {"peak_rss_kb", processMemory(h.pid()).peak_kb}});
  EXPECT_EQ(answered, probes) << "/healthz unanswered (status " << status
                              << ") with 100 slow connections open";
  ASSERT_TRUE(read) << "batchGet unanswered with 100 slow connections open";
  EXPECT_EQ(read->status, 200);
}

}  // namespace
}  // namespace perfhat::reliability
