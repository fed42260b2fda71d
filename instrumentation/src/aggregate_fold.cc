// Aggregate export's background half: the threads' CallRecords folded into per-site
// histograms (latency by caller, self time, sizes, loops), harvested into export rows.
#include "engine_internal.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

namespace perfhat::detail {

void Engine::fold_calls() {
  const double* bounds = sketch_bin_bounds();
  const double nspt = ns_per_tick();
  if (histograms_.size() < sites_.size()) histograms_.resize(sites_.size());
  for (ThreadState* ts : threads_) {
    if (ts->calls == nullptr) continue;
    uint64_t tail = ts->calls_tail.load(std::memory_order_relaxed);
    const uint64_t head = ts->calls_head.load(std::memory_order_acquire);
    if (ts->last_parent.size() < sites_.size()) ts->last_parent.resize(sites_.size());
    for (; tail != head; ++tail) fold_record(ts, ts->calls[tail & ts->calls_mask], nspt, bounds);
    ts->calls_tail.store(tail, std::memory_order_release);
  }
}

void Engine::fold_record(ThreadState* ts, const CallRecord& r, double nspt, const double* bounds) {
  if (histograms_.size() < sites_.size()) histograms_.resize(sites_.size());
  if (r.site >= histograms_.size()) return;  // cannot happen: sites register first
  SiteHistograms& site = histograms_[r.site];
  const double w = r.weight;
  switch (r.kind) {
    case CellKind::kSize:
      site.size.add(static_cast<double>(r.value), w, bounds);
      break;
    case CellKind::kLoop:
      SiteHistograms::of(site.loops, r.sub).add(static_cast<double>(r.value), w, bounds);
      break;
    case CellKind::kLatency: {
      Histogram& hist = SiteHistograms::of(site.latency, r.sub);
      hist.add(static_cast<double>(r.value) * nspt, w, bounds);
      if (r.error) hist.errors += w;
      if (w != 1) {  // recorded at a rate below 1: the handler marks its data as estimated
        hist.sampled_calls += w;
        hist.sampled_records += 1;
      }
      if (ts == nullptr) break;
      fold_self_time(*ts, r, nspt, bounds);
      if (r.sub == 0) break;
      if (ts->last_parent.size() <= r.site) ts->last_parent.resize(sites_.size());
      auto& seen = ts->last_parent[r.site];
      auto it =
          std::find_if(seen.begin(), seen.end(), [&](const auto& e) { return e.first == r.sub; });
      if (it == seen.end()) it = seen.insert(seen.end(), {r.sub, 0});
      const uint64_t caller_call = r.caller_call & kInvocationMask;
      if (it->second != caller_call) {
        hist.parents += w;
        it->second = caller_call;
      }
      break;
    }
  }
}

void Engine::fold_self_time(ThreadState& ts, const CallRecord& r, double nspt,
                            const double* bounds) {
  if (!(r.caller_call & kOwnInvocationKnown)) return;  // a span sent here: children unknown
  const uint64_t caller = r.caller_call & kInvocationMask;
  const uint64_t own = (r.caller_call >> kOwnInvocationShift) & kOwnInvocationBits;
  // Every open entry above the caller is this call's (or left by a call whose record was lost
  // to a full ring): calls nest, and the caller and its ancestors have smaller numbers.
  uint64_t children = 0;
  auto& open = ts.open_children;
  while (!open.empty() && open.back().first > caller) {
    if ((open.back().first & kOwnInvocationBits) == own) children = open.back().second;
    open.pop_back();
  }
  const uint64_t self = r.value > children ? r.value - children : 0;
  histograms_[r.site].self.add(static_cast<double>(self) * nspt, r.weight, bounds);
  if (caller == 0) return;
  if (open.empty() || open.back().first != caller) open.emplace_back(caller, 0);
  open.back().second += r.value;
}

void Engine::fold_span(const SpanFields& r) {
  const double* bounds = sketch_bin_bounds();
  const double nspt = ns_per_tick();
  const auto w = static_cast<float>(r.weight);
  fold_record(nullptr, {r.end - r.start, 0, r.site, 0, w, CellKind::kLatency, r.error}, nspt,
              bounds);
  if (r.result_size >= 0) {
    fold_record(nullptr,
                {static_cast<uint64_t>(r.result_size), 0, r.site, 0, w, CellKind::kSize, false},
                nspt, bounds);
  }
  if (r.loop_iterations >= 0) {
    fold_record(nullptr,
                {static_cast<uint64_t>(r.loop_iterations), 0, r.site, r.loop_line, w,
                 CellKind::kLoop, false},
                nspt, bounds);
  }
  to_aggregates_.fetch_add(1, std::memory_order_relaxed);
}

void Engine::harvest_histograms(ExportBatch& b, uint64_t now_tick) {
  fold_calls();
  b.histograms_end_unix_ns = to_unix_ns(now_tick);
  const auto minute = static_cast<int64_t>(b.histograms_end_unix_ns / 60'000'000'000ull);
  // Rows by kind/site/sub: a (site, caller) histogram is both its call-site row and part of the
  // site's function row.
  std::unordered_map<uint64_t, size_t> rows;
  auto row = [&](HistogramData::Kind kind, uint32_t site, uint32_t sub) -> HistogramData& {
    uint64_t k = (uint64_t{kind} << 56) | (uint64_t{sub} << 20) | site;
    auto [it, inserted] = rows.try_emplace(k, b.histograms.size());
    if (inserted) {
      HistogramData& h = b.histograms.emplace_back();
      h.kind = kind;
      h.site = site;  // engine ids until the end, then positions in b.sites
      h.caller = kind == HistogramData::kCallSite ? sub : 0;
      h.line = kind == HistogramData::kLoop ? sub : 0;
      h.minute = minute;
    }
    return b.histograms[it->second];
  };
  auto add = [](HistogramData& h, Histogram& hist) {
    for (size_t i = 0; i < hist.bins.size(); ++i) {
      if (hist.bins[i] != 0) h.bins.emplace_back(hist.lo + static_cast<int>(i), hist.bins[i]);
    }
    h.zero += hist.zero;
    h.sum += hist.sum;
  };
  // A PERFHAT_REQUEST and a PERFHAT_FUNCTION in one function time the same calls, and the
  // handler keys both sites by that function: only the function probe's rows count them, and
  // the edge between the two is no call (issue #19). twin_of(request site) = the function site
  // of the same function that has calls in this interval (else 0: the request's rows stay).
  std::unordered_map<std::string_view, uint32_t> function_sites;
  for (size_t id = 1; id < histograms_.size() && id < sites_.size(); ++id) {
    if (sites_[id].kind != kFunction) continue;
    for (const auto& [caller, hist] : histograms_[id].latency) {
      if (!hist.empty()) {
        function_sites.emplace(sites_[id].function, static_cast<uint32_t>(id));
        break;
      }
    }
  }
  // The lambdas run inside this function, under its mu_; clang checks each lambda on its own.
  auto twin_of = [&](uint32_t id) PERFHAT_REQUIRES(mu_) -> uint32_t {
    if (function_sites.empty() || id >= sites_.size() || sites_[id].kind != kRequest) return 0;
    auto it = function_sites.find(sites_[id].function);
    return it == function_sites.end() ? 0 : it->second;
  };
  for (size_t id = 0; id < histograms_.size(); ++id) {
    SiteHistograms& site = histograms_[id];
    const auto sid = static_cast<uint32_t>(id);
    const uint32_t twin = twin_of(sid);
    for (auto& [caller, hist] : site.latency) {
      if (hist.empty()) continue;
      if (twin == 0) {
        HistogramData& f = row(HistogramData::kFunction, sid, 0);
        add(f, hist);
        f.errors += hist.errors;
        f.sampled_calls += hist.sampled_calls;
        f.sampled_records += hist.sampled_records;
      }
      const bool self_edge = caller != 0 && (twin == caller || twin_of(caller) == sid);
      if (caller != 0 && !self_edge) {
        HistogramData& cs = row(HistogramData::kCallSite, sid, caller);
        add(cs, hist);
        cs.parents += hist.parents;
      }
      hist.clear();
    }
    for (auto& [line, hist] : site.loops) {
      if (hist.empty()) continue;
      add(row(HistogramData::kLoop, sid, line), hist);
      hist.clear();
    }
    if (!site.size.empty()) {
      add(row(HistogramData::kResultSize, sid, 0), site.size);
      site.size.clear();
    }
    if (!site.self.empty()) {
      if (twin == 0) add(row(HistogramData::kSelfTime, sid, 0), site.self);
      site.self.clear();
    }
  }
  // Engine site ids → the batch's site table; bins ascending, one entry per index.
  std::unordered_map<uint32_t, uint32_t> site_pos;
  auto site_ref = [&](uint32_t id) PERFHAT_REQUIRES(mu_) {
    auto [it, inserted] = site_pos.try_emplace(id, static_cast<uint32_t>(b.sites.size()));
    if (inserted) {
      SiteInfo& si = sites_[id < sites_.size() ? id : 0];
      resolve(si);
      b.sites.push_back({si.name, si.function, si.mangled, si.file, si.line});
    }
    return it->second;
  };
  for (HistogramData& h : b.histograms) {
    h.site = site_ref(h.site);
    if (h.kind == HistogramData::kCallSite) h.caller = site_ref(h.caller);
    std::sort(h.bins.begin(), h.bins.end());
    size_t out = 0;
    for (size_t i = 0; i < h.bins.size(); ++i) {
      if (out > 0 && h.bins[out - 1].first == h.bins[i].first) {
        h.bins[out - 1].second += h.bins[i].second;
      } else {
        h.bins[out++] = h.bins[i];
      }
    }
    h.bins.resize(out);
  }
}

}  // namespace perfhat::detail
