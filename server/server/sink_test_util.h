// Collects every message an in-process server sends, for the tests to wait on.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/thread_annotations.h"

namespace perfhat::server::testing {

class Sink {
 public:
  // `wait`: how long a wait for a message may take before it gives up.
  explicit Sink(std::chrono::seconds wait = std::chrono::seconds(20)) : wait_(wait) {}

  void push(const nlohmann::json& j) {
    {
      MutexLock lock(mu_);
      msgs_.push_back(j);
    }
    cv_.notifyAll();
  }
  // The first message (after `from`) matching `pred`, waiting for it.
  std::optional<nlohmann::json> waitFor(const std::function<bool(const nlohmann::json&)>& pred,
                                        size_t from = 0) {
    const auto deadline = std::chrono::steady_clock::now() + wait_;
    MutexLock lock(mu_);
    for (;;) {
      for (size_t i = from; i < msgs_.size(); ++i)
        if (pred(msgs_[i])) return msgs_[i];
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      cv_.waitUntil(lock, deadline);
    }
  }
  std::optional<nlohmann::json> reply(const nlohmann::json& id) {
    return waitFor([&](const nlohmann::json& m) {
      return m.contains("id") && m["id"] == id && !m.contains("method");
    });
  }
  size_t count(const std::string& method) {
    MutexLock lock(mu_);
    return std::count_if(msgs_.begin(), msgs_.end(),
                         [&](const nlohmann::json& m) { return m.value("method", "") == method; });
  }
  std::vector<nlohmann::json> all() {
    MutexLock lock(mu_);
    return msgs_;
  }

 private:
  const std::chrono::seconds wait_;
  Mutex mu_;
  CondVar cv_;
  std::vector<nlohmann::json> msgs_ GUARDED_BY(mu_);
};

}  // namespace perfhat::server::testing
