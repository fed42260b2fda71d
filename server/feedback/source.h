// Where production feedback comes from: a dataset file (--feedback-file) or a feedback handler
// over HTTP (--handler). Both answer bulk requests in the batchGet shape (DESIGN §5, §12).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/dynamic_metrics.h"
#include "common/feedback.h"

namespace perfhat::feedback {

enum class FetchStatus {
  Ok,
  Unreachable,   // connection refused / timed out: serve from cache, mark stale
  Unauthorized,  // 401/403: token missing or wrong
  ServerError,   // 5xx or 429
  BadResponse,   // 2xx with a body we cannot parse, or another 4xx
};

const char* toString(FetchStatus s);

struct FetchResult {
  FetchStatus status = FetchStatus::Ok;
  std::string error;  // human-readable, when status != Ok
  BatchGetResponse response;
  bool ok() const { return status == FetchStatus::Ok; }
};

struct ChangesResult {
  FetchStatus status = FetchStatus::Ok;
  std::string error;
  std::string cursor;             // pass back as `since` next time
  std::vector<std::string> keys;  // keys whose data changed
  bool all = false;               // the handler cannot tell (cursor too old): drop everything
  bool waited = false;            // the source honoured wait_ms (long-poll); false: poll instead
  // Filled by FeedbackProvider::poll: the requested keys whose cache entries were dropped.
  std::vector<std::string> invalidated;
};

// One function's dynamic metrics (`GET /v1/dynamic?key=`), or the call graph around it as dot
// (`GET /v1/dynamic/graph`).
struct DynamicResult {
  FetchStatus status = FetchStatus::Ok;
  std::string error;
  // The source has no dynamic metrics (a file, or a handler older than them): no lens, no error.
  bool unsupported = false;
  std::optional<DynamicMetrics> metrics;  // Ok without metrics: the handler has never seen the key
  std::string dot;                        // for dynamicGraph
  bool ok() const { return status == FetchStatus::Ok && !unsupported; }
};

// A service's collection-budget status (`GET /v1/budget?service=`, docs/collection-budget.md).
struct BudgetResult {
  FetchStatus status = FetchStatus::Ok;
  std::string error;
  bool unsupported = false;  // a file, or a handler older than /v1/budget: no error
  bool none = false;         // the handler has no status of that service yet: no error
  std::string body;          // the handler's answer, when ok() and not none
  bool ok() const { return status == FetchStatus::Ok && !unsupported; }
};

class FeedbackSource {
 public:
  virtual ~FeedbackSource() = default;
  // One bulk request for `keys` (canonical keys or mangled names).
  virtual FetchResult batchGet(const std::vector<std::string>& keys) = 0;
  // What changed since `cursor` ("" = from now on: returns the current cursor and no keys).
  virtual ChangesResult changes(const std::string& cursor) = 0;
  // Long-poll: like changes(), but may block up to `wait_ms` until something changes. Sources
  // without a change feed to wait on answer at once (`waited` stays false).
  virtual ChangesResult waitChanges(const std::string& cursor, int /*wait_ms*/) {
    return changes(cursor);
  }
  // Whether waitChanges() can block on the source (a handler); a file has nothing to wait on.
  virtual bool canWait() const { return false; }
  // Makes a waitChanges() blocked in another thread return soon (thread-safe; for shutdown).
  virtual void cancelWait() {}
  // Makes a batchGet() in flight in another thread fail soon (thread-safe; for shutdown).
  virtual void cancelFetch() {}
  // Dynamic metrics of one function (docs/dynamic-metrics.md); sources without them say so.
  virtual DynamicResult dynamicMetrics(const std::string& /*key*/) {
    DynamicResult r;
    r.unsupported = true;
    return r;
  }
  // The call graph around `key`, `depth` arcs each way, as Graphviz dot.
  virtual DynamicResult dynamicGraph(const std::string& /*key*/, int /*depth*/) {
    DynamicResult r;
    r.unsupported = true;
    return r;
  }
  // The newest collection-budget status of `service` (of any service when empty).
  virtual BudgetResult budgetStatus(const std::string& /*service*/) {
    BudgetResult r;
    r.unsupported = true;
    return r;
  }
  // For logs and messages ("file /x/y.json", "handler http://127.0.0.1:4319").
  virtual std::string describe() const = 0;
};

}  // namespace perfhat::feedback
