// Read routes: batchGet, one key, the change feed (with long-poll) and the bulk export. Every
// read first waits for acknowledged ingest to reach the aggregates (flushed()).
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/result.h"
#include "feedback-handler/http/feedback_writer.h"
#include "feedback-handler/http/http_answers.h"
#include "feedback-handler/http/server.h"
#include "feedback-handler/ingest/intake_limits.h"
#include "feedback-handler/sync/export_json.h"
#include "feedback-handler/util/parallel.h"

namespace perfhat::handler {
namespace {

using nlohmann::json;

// Keys per thread from which the store and the writer split a batchGet (their chunk minimum).
constexpr size_t kLargeReadKeysPerThread = 1024;

// The query parameter `name` as a whole number, `fallback` when absent.
Result<uint64_t> queryNumber(const httplib::Request& req, const char* name, uint64_t fallback) {
  if (!req.has_param(name)) return Result<uint64_t>::success(fallback);
  const Result<unsigned long long> n = parseUnsigned(req.get_param_value(name));
  return n.ok() ? Result<uint64_t>::success(n.value) : Result<uint64_t>::failure(n.error);
}

}  // namespace

void HandlerServer::postBatchGet(const httplib::Request& req, httplib::Response& res,
                                 const httplib::ContentReader& reader) {
  std::string body;
  if (!readBody(req, res, reader, options_.max_decoded_bytes, body)) return;
  // A request large enough to be split (each key is two quotes) gets one team of threads
  // for reading and writing, started now so that their start-up overlaps the parse.
  std::optional<ChunkTeam> team;
  const size_t threads = requestThreads(store_.options().read_threads);
  if (chunkCount(static_cast<size_t>(std::count(body.begin(), body.end(), '"')) / 2,
                 kLargeReadKeysPerThread, threads) > 1) {
    team.emplace(threads);
  }
  BatchGetRequest r = parseBatchGetRequest(body);
  if (r.keys.size() > options_.max_batch_keys) {
    return setError(res, 413, "payload_too_large",
                    "at most " + std::to_string(options_.max_batch_keys) + " keys per call");
  }
  // No stored key is longer (ingest refuses them), and "missing" would echo it back.
  for (size_t i = 0; i < r.keys.size(); ++i) {
    if (r.keys[i].size() > IntakeLimits::kMaxKeyBytes) {
      return setError(res, 400, "invalid_argument",
                      "keys[" + std::to_string(i) + "] is longer than " +
                          std::to_string(IntakeLimits::kMaxKeyBytes) + " bytes");
    }
  }
  ageHeader(res);
  flushed(res);
  BatchGetResponse answer = store_.batchGet(r, team ? &*team : nullptr);
  sendPieces(res,
             team ? writeBatchGetResponsePieces(std::move(answer), *team)
                  : writeBatchGetResponsePieces(answer, store_.options().read_threads),
             kJson);
}

void HandlerServer::getFeedback(const httplib::Request& req, httplib::Response& res) {
  std::string key = req.get_param_value("key");
  if (key.empty()) return setError(res, 400, "invalid_argument", "missing ?key=");
  if (key.size() > IntakeLimits::kMaxKeyBytes) {
    return setError(res, 400, "invalid_argument",
                    "key is longer than " + std::to_string(IntakeLimits::kMaxKeyBytes) + " bytes");
  }
  BatchGetRequest r;
  r.keys = {key};
  if (req.has_param("from") || req.has_param("to")) {
    r.range = TimeWindow{req.get_param_value("from"), req.get_param_value("to")};
  }
  flushed(res);
  BatchGetResponse out = store_.batchGet(r);
  if (out.items.empty()) return setError(res, 404, "not_found", "no data for key: " + key);
  ageHeader(res);
  res.set_content(writeFeedbackItem(out.items[0]), kJson);
}

// Long-poll: with wait_ms=N the request parks (bounded count, capped N) until a commit moves
// the cursor past `since`, so editors refresh about a second after data arrives. The
// X-Perfhat-Wait-Ms header says the wait was honoured: older handlers ignore wait_ms and
// answer at once, and clients then fall back to plain polling. `since=` (empty) = from now.
void HandlerServer::getChanges(const httplib::Request& req, httplib::Response& res) {
  constexpr uint64_t kMaxWaitMs = 30000;  // below common proxy and client idle timeouts
  const bool from_now = req.has_param("since") && req.get_param_value("since").empty();
  const Result<uint64_t> since =
      from_now ? Result<uint64_t>::success(0) : queryNumber(req, "since", 0);
  if (!since) return setError(res, 400, "invalid_argument", "since must be a cursor (integer)");
  const Result<uint64_t> limit = queryNumber(req, "limit", 10000);
  if (!limit || limit.value == 0) {
    return setError(res, 400, "invalid_argument", "limit must be a positive integer");
  }
  Result<uint64_t> wait_ms = queryNumber(req, "wait_ms", 0);
  if (!wait_ms) {
    return setError(res, 400, "invalid_argument",
                    "wait_ms must be a non-negative integer (milliseconds)");
  }
  if (req.has_param("wait_ms")) {
    wait_ms.value = std::min(wait_ms.value, kMaxWaitMs);
    res.set_header("X-Perfhat-Wait-Ms", std::to_string(wait_ms.value));
  }
  auto reply = [&res](const ChangesPage& p, bool reset) {
    json out{{"cursor", std::to_string(p.cursor)}, {"keys", p.keys}};
    if (reset) out["reset"] = true;  // the store is older than the client's cursor
    res.set_content(out.dump(-1, ' ', false, json::error_handler_t::replace), kJson);
  };
  if (from_now) return reply(ChangesPage{store_.cursor(), {}}, false);

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms.value);
  // Parked requests hold a connection thread each.
  const size_t max_waiters = std::max<size_t>(1, options_.max_change_waiters);
  for (bool first = true;; first = false) {
    const uint64_t seen = changes_.generation();  // before the read: no lost wake-up
    if (first) flushed(res);                      // later wake-ups come from checkpoints
    ChangesPage p = store_.changes(since.value, limit.value);
    if (p.cursor < since.value) return reply(p, true);
    auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (!p.keys.empty() || p.cursor > since.value || left.count() <= 0) return reply(p, false);
    switch (changes_.wait(seen, left, max_waiters)) {
      case ChangeNotifier::WaitResult::kChanged:
        continue;  // re-read the store
      case ChangeNotifier::WaitResult::kTooManyWaiters:
        res.set_header("Retry-After", "1");
        return setError(res, 429, "resource_exhausted",
                        "too many waiting change requests; retry, or poll without wait_ms");
      case ChangeNotifier::WaitResult::kTimeout:
      case ChangeNotifier::WaitResult::kShutdown:
        return reply(p, false);
    }
  }
}

void HandlerServer::getExport(const httplib::Request& req, httplib::Response& res) {
  const Result<uint64_t> since = queryNumber(req, "since", 0);
  if (!since) return setError(res, 400, "invalid_argument", "since must be a cursor (integer)");
  const Result<uint64_t> limit = queryNumber(req, "limit", 20000);
  if (!limit || limit.value == 0) {
    return setError(res, 400, "invalid_argument", "limit must be a positive integer");
  }
  flushed(res);
  res.set_content(serializeExport(store_.exportSince(since.value, limit.value)), kJson);
}

}  // namespace perfhat::handler
