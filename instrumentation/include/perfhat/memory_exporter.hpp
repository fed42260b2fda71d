// In-memory exporter: keeps every exported batch (tests, benchmarks).
#pragma once

#include <mutex>

#include "perfhat/exporter.hpp"

namespace perfhat {

class MemoryExporter final : public Exporter {
 public:
  ExportResult export_batch(const ExportBatch& batch) override {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& s : batch.spans) spans_.push_back(s);
    for (const auto& a : batch.aggregates) aggregates_.push_back(a);
    ++batches_;
    return ExportResult::kSuccess;
  }
  std::vector<SpanData> spans() const {
    std::lock_guard<std::mutex> l(mu_);
    return spans_;
  }
  std::vector<AggregateData> aggregates() const {
    std::lock_guard<std::mutex> l(mu_);
    return aggregates_;
  }
  size_t batches() const {
    std::lock_guard<std::mutex> l(mu_);
    return batches_;
  }
  void clear() {
    std::lock_guard<std::mutex> l(mu_);
    spans_.clear();
    aggregates_.clear();
    batches_ = 0;
  }

 private:
  mutable std::mutex mu_;
  std::vector<SpanData> spans_;
  std::vector<AggregateData> aggregates_;
  size_t batches_ = 0;
};

}  // namespace perfhat
