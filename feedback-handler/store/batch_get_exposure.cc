// BatchGetReader step 4b: exposure under probe distribution (variants/exposure.h).
#include <string_view>
#include <unordered_set>

#include "feedback-handler/store/batch_get_reader.h"
#include "feedback-handler/variants/exposure.h"

namespace perfhat::handler {

void BatchGetReader::addExposure(BatchGetResponse& out) {
  if (!options_.releases) return;
  // The traffic of every release variant in the window, per service (at most 100,000 service ×
  // release variant × replica combinations: a bound on the read, far above real fleets).
  std::vector<VariantTraffic> traffic;
  sql::Stmt q(im_->db,
              "SELECT service, sub, SUM(x1), SUM(x2) FROM aggregates WHERE key = '' AND "
              "bucket >= ?1 AND bucket <= ?2 AND kind = 'v' GROUP BY service, sub LIMIT 100000");
  q.bind(1, cur_.first_bucket()).bind(2, cur_.last_bucket());
  while (q.step()) {
    VariantTraffic t;
    if (!parseTrafficSub(q.text(1), t)) continue;
    t.service = q.text(0);
    t.requests = q.f64(2);
    t.calls = q.f64(3);
    traffic.push_back(std::move(t));
  }
  if (traffic.empty()) return;
  const TrafficIndex index = TrafficIndex::of(traffic);
  ReleaseCatalog& catalog = *options_.releases;
  for (size_t i = 0; i < items_.size(); ++i) {
    if (!has_data_[i]) continue;
    FeedbackItem& item = items_[i];
    // Data for a function no variant probes came from probes no mask governs (request roots,
    // processes without a variant): it is the whole traffic's, and no exposure is claimed.
    auto e = exposureOf(item.key, item.services, index, catalog);
    if (e && e->replicas_probed > 0) normalizeByExposure(item, std::move(*e));
  }
  // Requested keys without data that no variant probes: "not probed", not "no data". Their
  // service is unknown, so every service's releases count.
  std::unordered_set<std::string_view> seen;
  for (size_t i = 0; i < n_; ++i) {
    const uint32_t idx = item_of_[i];
    if (idx != kNone && has_data_[idx]) continue;
    const std::string& key = request_.keys[i];
    if (!seen.insert(key).second) continue;
    auto e = exposureOf(key, {}, index, catalog);
    if (e && e->replicas_probed == 0) out.unprobed.push_back({key, std::move(*e)});
  }
}

}  // namespace perfhat::handler
