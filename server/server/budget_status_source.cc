#include "server/server/budget_status_source.h"

#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "server/server/budget_command.h"

namespace perfhat::server {
namespace {

using nlohmann::json;
using WallClock = std::chrono::system_clock;
namespace cb = collection_budget;

constexpr auto kReuseFor = std::chrono::seconds(1);  // one answer serves a burst of lenses
constexpr auto kRestFor = std::chrono::seconds(10);  // after a failed read

struct HandlerStatus {
  std::optional<cb::Status> status;
  WallClock::time_point at;  // when the library sent it (the handler's receive time)
  std::string error;         // a failed read or a malformed answer
};

// The handler's answer, or nullopt when it has none (404) or no /v1/budget.
HandlerStatus readHandler(feedback::FeedbackProvider& p, const std::string& service) {
  HandlerStatus h;
  const feedback::BudgetResult r = p.budgetStatus(service);
  if (r.unsupported || r.none) return h;
  if (!r.ok()) {
    h.error = r.error;
    return h;
  }
  try {
    const json j = json::parse(r.body);
    h.status = cb::parseStatus(j.at("status"));
    const double age_s = j.value("age_s", 0.0);
    h.at = WallClock::now() - std::chrono::duration_cast<WallClock::duration>(
                                  std::chrono::duration<double>(std::max(0.0, age_s)));
  } catch (const std::exception& e) {
    h.status.reset();
    h.error = std::string("budget: malformed answer from the handler: ") + e.what();
  }
  return h;
}

// Recent answers per (source, service): shared by every server of the process.
class HandlerCache {
 public:
  HandlerStatus get(feedback::FeedbackProvider& p, const std::string& service) {
    const std::string key = p.source().describe() + '\0' + service;
    const auto now = std::chrono::steady_clock::now();
    {
      std::lock_guard lock(mu_);
      auto it = entries_.find(key);
      if (it != entries_.end() &&
          now - it->second.read_at < (it->second.value.error.empty() ? kReuseFor : kRestFor)) {
        return it->second.value;
      }
    }
    HandlerStatus h = readHandler(p, service);  // without the lock: bounded by its timeout
    std::lock_guard lock(mu_);
    if (entries_.size() > 64) entries_.clear();
    entries_[key] = {now, h};
    return h;
  }

 private:
  struct Entry {
    std::chrono::steady_clock::time_point read_at;
    HandlerStatus value;
  };
  std::mutex mu_;
  std::map<std::string, Entry> entries_;  // guarded by mu_
};

std::optional<WallClock::time_point> fileTime(const std::string& path) {
  std::error_code ec;
  const auto t = std::filesystem::last_write_time(path, ec);
  if (ec) return std::nullopt;
  return std::chrono::time_point_cast<WallClock::duration>(std::chrono::file_clock::to_sys(t));
}

}  // namespace

LoadedBudget loadBudget(const BudgetSources& s) {
  static HandlerCache cache;
  LoadedBudget out;
  HandlerStatus h;
  if (s.provider) h = cache.get(*s.provider, s.service);
  std::string file_error;
  std::optional<cb::Status> file;
  if (!s.status_file.empty()) {
    Result<cb::Status> loaded = loadBudgetStatus(s.status_file);
    if (loaded) file = std::move(loaded.value);
    file_error = std::move(loaded.error);
  }
  const bool file_newer =
      file && (!h.status || fileTime(s.status_file).value_or(WallClock::time_point{}) > h.at);
  if (h.status && !file_newer) {
    out.status = std::move(h.status);
    out.from = s.provider->source().describe();
    return out;
  }
  if (file) {
    out.status = std::move(file);
    out.from = "file " + s.status_file;
    out.error = h.error;
    return out;
  }
  if (!h.error.empty()) {
    out.error = h.error;
  } else if (!s.status_file.empty()) {
    out.error = file_error;
  } else {
    out.error = s.provider ? "the handler has no collection-budget status" +
                                 (s.service.empty() ? std::string() : " of service " + s.service) +
                                 ", and no budget status file is configured (budgetStatus or "
                                 "PERFHAT_BUDGET_STATUS)"
                           : "no budget status file configured (budgetStatus or "
                             "PERFHAT_BUDGET_STATUS) and no handler";
  }
  return out;
}

}  // namespace perfhat::server
