// CPU cost of exporting spans (issues #4/#5): OTLP encoding of realistic batches, with and
// without gzip, and the engine's drain (ring -> SpanData -> batch) followed by that encoding.
// Every number is per span (items_per_second is spans/s of CPU time). Run e.g.
//   instr_otlp_encode_benchmark --benchmark_min_time=0.5s
// On a loaded machine compare ratios from one run, or count instructions with callgrind.
#include <benchmark/benchmark.h>
#include <zlib.h>

#include <memory>
#include <string>
#include <vector>

#include "otlp_encode.h"
#include "perfhat/exporter.hpp"
#include "perfhat/perfhat.hpp"

namespace {

// Sites shaped like the sample service's: __PRETTY_FUNCTION__ names, Itanium mangled names and
// absolute source paths, most longer than the small-string buffer.
struct Site {
  const char* function;
  const char* mangled;
  const char* file;
  uint32_t line;
};
const Site kSites[] = {
    {"std::vector<agile::Task> agile::TaskService::list_tasks(const std::string&, int)",
     "_ZN5agile11TaskService10list_tasksERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEi",
     "samples/agile/service/task_service.cc", 41},
    {"double agile::Estimator::story_points(const agile::Story&) const",
     "_ZNK5agile9Estimator12story_pointsERKNS_5StoryE", "samples/agile/service/estimator.cc", 88},
    {"void agile::Store::load_sprint(int64_t)", "_ZN5agile5Store11load_sprintEl",
     "samples/agile/service/store.cc", 120},
    {"std::string agile::render_json(const agile::Board&)", "_ZN5agile11render_jsonERKNS_5BoardE",
     "samples/agile/service/render.cc", 17},
    {"bool agile::Auth::check(const std::string&)",
     "_ZN5agile4Auth5checkERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
     "samples/agile/service/auth.cc", 9},
};

perfhat::ExportBatch make_batch(size_t n) {
  perfhat::ExportBatch b;
  b.resource.service_name = "agile-service";
  b.resource.service_version = "1.4.2";
  b.resource.host_name = "bench-host";
  uint64_t id = 0x1234567890abcdefULL;
  for (size_t i = 0; i < n; ++i) {
    const Site& site = kSites[i % std::size(kSites)];
    perfhat::SpanData s;
    for (int k = 0; k < 16; ++k) s.trace_id[k] = static_cast<uint8_t>(i / 139 * 31 + k);
    s.span_id = id += 0x9e3779b97f4a7c15ULL;
    s.parent_span_id = i % 139 == 0 ? 0 : id - 7;
    s.is_request = i % 139 == 0;
    s.name = s.is_request ? "GET /boards/{id}/tasks" : site.function;
    s.function = site.function;
    s.mangled = site.mangled;
    s.file = site.file;
    s.line = site.line;
    s.start_unix_ns = 1763790000000000000ULL + i * 1733;
    s.end_unix_ns = s.start_unix_ns + 800 + i % 97;
    s.weight = 2.0;
    s.thread_id = 4242 + i % 4;
    if (i % 3 == 0) s.result_size = static_cast<int64_t>(i % 50);
    if (i % 5 == 0) {
      s.loop_iterations = static_cast<int64_t>(i % 20);
      s.loop_line = site.line + 3;
    }
    if (s.is_request) {
      perfhat::AttributeValue a;
      a.key = "http.route";
      a.kind = perfhat::AttributeValue::kString;
      a.s = "/boards/{id}/tasks";
      s.attributes.push_back(a);
    }
    s.error = i % 101 == 0;
    b.spans.push_back(std::move(s));
  }
  return b;
}

void BM_TracesProtobuf(benchmark::State& st) {
  perfhat::ExportBatch b = make_batch(static_cast<size_t>(st.range(0)));
  size_t bytes = 0;
  for ([[maybe_unused]] auto _ : st) {
    std::string body = perfhat::otlp::traces_protobuf(b);
    bytes = body.size();
    benchmark::DoNotOptimize(body.data());
  }
  st.SetItemsProcessed(st.iterations() * st.range(0));
  st.counters["bytes_per_span"] = static_cast<double>(bytes) / static_cast<double>(st.range(0));
}
BENCHMARK(BM_TracesProtobuf)->Arg(139)->Arg(512);

// gzip (zlib deflate with a gzip header) of the protobuf body at the level in range(1).
void BM_TracesProtobufGzip(benchmark::State& st) {
  perfhat::ExportBatch b = make_batch(static_cast<size_t>(st.range(0)));
  int level = static_cast<int>(st.range(1));
  size_t in = 0, out = 0;
  std::string z;
  for ([[maybe_unused]] auto _ : st) {
    std::string body = perfhat::otlp::traces_protobuf(b);
    z_stream zs{};
    if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      st.SkipWithError("deflateInit2 failed");
      break;
    }
    z.resize(deflateBound(&zs, body.size()));
    zs.next_in = reinterpret_cast<Bytef*>(body.data());
    zs.avail_in = static_cast<uInt>(body.size());
    zs.next_out = reinterpret_cast<Bytef*>(z.data());
    zs.avail_out = static_cast<uInt>(z.size());
    deflate(&zs, Z_FINISH);
    in = body.size();
    out = zs.total_out;
    deflateEnd(&zs);
    benchmark::DoNotOptimize(z.data());
  }
  st.SetItemsProcessed(st.iterations() * st.range(0));
  st.counters["ratio"] = out ? static_cast<double>(in) / static_cast<double>(out) : 0;
}
BENCHMARK(BM_TracesProtobufGzip)->Args({512, 1})->Args({512, 6});

void BM_TracesJson(benchmark::State& st) {
  perfhat::ExportBatch b = make_batch(static_cast<size_t>(st.range(0)));
  for ([[maybe_unused]] auto _ : st) {
    std::string body = perfhat::otlp::traces_json(b);
    benchmark::DoNotOptimize(body.data());
  }
  st.SetItemsProcessed(st.iterations() * st.range(0));
}
BENCHMARK(BM_TracesJson)->Arg(512);

// Encodes each batch the engine hands over, as the OTLP exporter does, without the HTTP POST.
class EncodingExporter final : public perfhat::Exporter {
 public:
  perfhat::ExportResult export_batch(const perfhat::ExportBatch& b) override {
    if (!b.spans.empty()) bytes += perfhat::otlp::traces_protobuf(b).size();
    if (!b.aggregates.empty()) bytes += perfhat::otlp::metrics_protobuf(b).size();
    return perfhat::ExportResult::kSuccess;
  }
  size_t bytes = 0;
};

[[gnu::noinline]] int probed_leaf(int x) {
  PERFHAT_FUNCTION();
  PERFHAT_RESULT_SIZE(x & 7);
  return x + 1;
}
[[gnu::noinline]] int probed_parent(int x) {
  PERFHAT_FUNCTION();
  return probed_leaf(x) + probed_leaf(x + 1);
}

// range(0) spans are recorded with timing paused; the timed part is perfhat::flush(): the drain
// of the per-thread ring, SpanData construction, batching and protobuf encoding.
void BM_DrainEncode(benchmark::State& st) {
  auto ex = std::make_shared<EncodingExporter>();
  perfhat::Config cfg;
  cfg.service_name = "bench";
  cfg.sampler = "full";
  cfg.export_interval_s = 3600;  // only the benchmark's flush() exports
  cfg.cycle_s = 3600;
  if (!perfhat::init(cfg, ex)) {
    st.SkipWithError("perfhat::init failed");
    return;
  }
  int calls = static_cast<int>(st.range(0) / 3);
  for ([[maybe_unused]] auto _ : st) {
    st.PauseTiming();
    for (int i = 0; i < calls; ++i) benchmark::DoNotOptimize(probed_parent(i));
    st.ResumeTiming();
    perfhat::flush();
  }
  auto c = perfhat::counters();
  perfhat::shutdown();
  st.SetItemsProcessed(st.iterations() * calls * 3);
  st.counters["dropped"] = static_cast<double>(c.spans_dropped_ring + c.spans_dropped_queue);
}
BENCHMARK(BM_DrainEncode)->Arg(int64_t{3} * 512);

}  // namespace
