// One batchGet, step by step (DESIGN §5 "Read path"): resolve the requested keys to stored
// functions, read their aggregate rows and hosts (large requests in chunks on parallel read
// connections of one snapshot), rate each call site against its caller, add what exporters
// reported lost, and put the items in request order.
//
// Many keys take a handful of statements, not several per key: the requested keys go to the
// database as one JSON array (sql::jsonEach) joined against the functions, aggregates and hosts
// tables, each an index lookup or range scan per key inside one statement.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "feedback-handler/store/row_accumulator.h"
#include "feedback-handler/store/store_impl.h"
#include "feedback-handler/util/parallel.h"

namespace perfhat::handler {

class BatchGetReader {
 public:
  // Resolves the request's windows (throws std::invalid_argument on a malformed one); reads
  // nothing yet.
  BatchGetReader(const StoreOptions& options, const BatchGetRequest& request, ChunkTeam* team);
  // The answer, read from `store` in one snapshot. The caller holds the store's lock throughout.
  BatchGetResponse read(Store::Impl& store);

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  // A call site's raw count and x1, kept until the caller totals of rateCallSites() are known.
  struct CallerFix {
    uint32_t item;
    uint32_t callsite;
    double count, x1;
  };

  void resolveExactKeys();
  void resolveByName();
  void readRows();
  void readChunk(sql::Db& db, size_t begin, size_t end, std::vector<CallerFix>& fixes);
  bool readAggregates(sql::Db& db, size_t begin, size_t end, const std::string& keys, bool ordered,
                      store_detail::KeyAcc& acc, std::vector<CallerFix>& fixes);
  void finishItem(size_t idx, store_detail::KeyAcc& acc, std::vector<CallerFix>& fixes);
  void forgetChunk(size_t begin, size_t end);
  void rateCallSites();
  void addDroppedCalls();
  // Step 4b (variants/exposure.h): counts divided by the traffic share that probed them; the
  // requested keys no variant probes into `out.unprobed`.
  void addExposure(BatchGetResponse& out);
  BatchGetResponse inRequestOrder(BatchGetResponse out);

  bool known(size_t i, std::string_view stored_key);
  void adopt(size_t i);
  size_t chunksFor(size_t count);
  template <typename Fn>
  void inChunks(size_t count, size_t chunks, Fn&& fn);

  Store::Impl* im_ = nullptr;  // during read()
  const StoreOptions& options_;
  const BatchGetRequest& request_;
  ChunkTeam* team_;
  std::optional<ChunkTeam> own_team_;  // one start of threads for both chunked steps
  store_detail::Window cur_;
  std::optional<store_detail::Window> base_;
  int64_t lo_ = 0, hi_ = 0;  // buckets spanning both windows
  TimeWindow cur_text_, base_text_;

  size_t n_ = 0;                       // requested keys
  std::vector<FeedbackItem> items_;    // one per stored key; `by_key_` views their keys in place
  std::vector<size_t> first_request_;  // item → its first request position
  std::vector<uint32_t> item_of_;      // request position → item, or kNone
  std::unordered_map<std::string_view, uint32_t> by_key_;
  std::vector<std::string_view> stored_keys_;
  std::vector<char> has_data_, done_;
  std::vector<char> extra_;  // items only a name lookup asked for (instantiations, overrides)
  std::vector<CallerFix> fixes_;
  std::vector<sql::Db*> dbs_;  // chunk c reads on dbs_[c]; dbs_[0] is the store's connection
};

}  // namespace perfhat::handler
