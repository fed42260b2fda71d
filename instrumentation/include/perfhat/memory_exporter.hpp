// In-memory exporter: keeps every exported batch (tests, benchmarks).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "perfhat/exporter.hpp"

namespace perfhat {

class MemoryExporter final : public Exporter {
 public:
  ExportResult export_batch(const ExportBatch& batch) override {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& s : batch.spans) spans_.push_back(s);
    for (const auto& a : batch.aggregates) aggregates_.push_back(a);
    // Histograms refer to their batch's site table: keep each with its sites resolved.
    for (const auto& h : batch.histograms) {
      histograms_.push_back(
          {h, batch.sites.at(h.site),
           h.kind == HistogramData::kCallSite ? batch.sites.at(h.caller) : SiteIdentity{}});
    }
    resource_ = batch.resource;
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
  // Calls counted in the aggregates of the functions whose name contains `needle`.
  uint64_t calls_of(const std::string& needle) const {
    std::lock_guard<std::mutex> l(mu_);
    uint64_t n = 0;
    for (const auto& a : aggregates_) {
      if (a.function.find(needle) != std::string::npos) n += a.count;
    }
    return n;
  }
  struct Histogram {
    HistogramData data;
    SiteIdentity site, caller;
  };
  std::vector<Histogram> histograms() const {
    std::lock_guard<std::mutex> l(mu_);
    return histograms_;
  }
  // The resource of the last batch (every batch carries the same one).
  Resource resource() const {
    std::lock_guard<std::mutex> l(mu_);
    return resource_;
  }
  size_t batches() const {
    std::lock_guard<std::mutex> l(mu_);
    return batches_;
  }
  void clear() {
    std::lock_guard<std::mutex> l(mu_);
    spans_.clear();
    aggregates_.clear();
    histograms_.clear();
    batches_ = 0;
  }

 private:
  mutable std::mutex mu_;
  std::vector<SpanData> spans_;
  std::vector<AggregateData> aggregates_;
  std::vector<Histogram> histograms_;
  Resource resource_;
  size_t batches_ = 0;
};

}  // namespace perfhat
