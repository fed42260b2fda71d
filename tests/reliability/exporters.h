// Exporters for the reliability suite: threads that stream OTLP protobuf batches to a handler
// over keep-alive connections and remember which batches were acknowledged, so that a check
// after faults can demand every acknowledged batch back, exactly once.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/handler_test_util.h"
#include "tests/reliability/suite.h"

namespace perfhat::reliability {

constexpr size_t kSpansPerBatch = 20;

// The function key of batch `i` of exporter `e` in round `round`: one key per batch, so presence
// and the exact count (kSpansPerBatch) show whether it was kept, lost or counted twice.
inline std::string batchKey(const std::string& round, int e, int i) {
  return "rel::" + round + "_e" + std::to_string(e) + "_b" + std::to_string(i);
}

inline std::string batchBody(const std::string& key, uint64_t seed) {
  return otlp::encodeProtobuf(
      testing::spansFor(key, testing::lognormalLatencies(kSpansPerBatch, seed), seed));
}

// What the exporters saw.
struct StreamTally {
  std::vector<std::string> acked;  // keys of batches answered 2xx
  std::map<int, size_t> refused;   // status -> count, for every non-2xx answer
  size_t no_response = 0;          // connection refused, reset or timed out
  size_t acked_after_mark = 0;     // acknowledged after mark() (e.g. after a restart)
};

// `exporters` threads each POST one batch after another (optionally paced) until stop(). A
// request without an answer is counted and retried after a short pause (the handler may be
// restarting), never as acknowledged.
class ExporterStream {
 public:
  ExporterStream(std::string url, std::string token, std::string round, int exporters,
                 std::chrono::milliseconds pause = std::chrono::milliseconds(0))
      : url_(std::move(url)), token_(std::move(token)), round_(std::move(round)) {
    for (int e = 0; e < exporters; ++e) {
      threads_.emplace_back([this, e, pause] { run(e, pause); });
    }
  }
  ~ExporterStream() { stop(); }
  ExporterStream(const ExporterStream&) = delete;
  ExporterStream& operator=(const ExporterStream&) = delete;

  void stop() {
    stop_ = true;
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
  }
  // From now on, acknowledged batches are also counted in `acked_after_mark`.
  void mark() { marked_ = true; }
  size_t sent() const { return sent_.load(); }
  StreamTally tally() const {
    std::lock_guard lock(mu_);
    return tally_;
  }

 private:
  void run(int e, std::chrono::milliseconds pause) {
    auto c = testing::client(url_, token_);
    c.set_connection_timeout(std::chrono::seconds(2));
    c.set_read_timeout(std::chrono::seconds(10));
    for (int i = 0; !stop_ && i < 1'000'000; ++i) {
      const std::string key = batchKey(round_, e, i);
      auto res = c.Post("/v1/traces", batchBody(key, static_cast<uint64_t>(e * 1'000'003 + i)),
                        "application/x-protobuf");
      ++sent_;
      {
        std::lock_guard lock(mu_);
        if (!res) {
          ++tally_.no_response;
        } else if (res->status / 100 == 2) {
          tally_.acked.push_back(key);
          if (marked_) ++tally_.acked_after_mark;
        } else {
          ++tally_.refused[res->status];
        }
      }
      if (!res) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (pause.count() > 0) std::this_thread::sleep_for(pause);
    }
  }

  const std::string url_, token_, round_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> marked_{false};
  std::atomic<size_t> sent_{0};
  mutable std::mutex mu_;
  StreamTally tally_;  // GUARDED_BY(mu_)
  std::vector<std::thread> threads_;
};

// Result of reading acknowledged batches back.
struct Verification {
  size_t checked = 0;
  size_t missing = 0;
  size_t wrong_count = 0;  // present, but not exactly kSpansPerBatch spans (lost or doubled)
  std::string first_problem;
};

// Reads every key back (in chunks) and checks each was kept exactly once.
inline Verification verifyAcked(const std::string& url, const std::string& token,
                                const std::vector<std::string>& keys) {
  Verification v;
  auto c = testing::client(url, token);
  for (size_t off = 0; off < keys.size(); off += 2000) {
    std::vector<std::string> chunk(
        keys.begin() + static_cast<long>(off),
        keys.begin() + static_cast<long>(std::min(keys.size(), off + 2000)));
    BatchGetResponse r = testing::batchGet(c, chunk);
    v.checked += chunk.size();
    v.missing += r.missing.size();
    if (!r.missing.empty() && v.first_problem.empty()) v.first_problem = "missing " + r.missing[0];
    for (const auto& item : r.items) {
      if (!item.stats || item.stats->count != kSpansPerBatch) {
        ++v.wrong_count;
        if (v.first_problem.empty()) {
          v.first_problem = item.key + " has " +
                            (item.stats ? std::to_string(item.stats->count) : std::string("no")) +
                            " spans, not " + std::to_string(kSpansPerBatch);
        }
      }
    }
  }
  return v;
}

}  // namespace perfhat::reliability
