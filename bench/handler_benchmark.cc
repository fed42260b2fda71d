// Handler benchmarks (results in bench/README.md, "Handler" section):
//  * OTLP decode alone, JSON and protobuf (spans/s on one core)
//  * ingest over loopback HTTP into a real SQLite store (write-behind: durable intake log before
//    each 2xx), JSON and protobuf, with an in-process load generator (keep-alive client,
//    500-span requests); protobuf also into a real PostgreSQL (write-through, a throwaway server)
//  * batchGet for 10,000 keys (store API and over HTTP), on one thread (the baseline) and on the
//    default threads (one per core, at most 4)
//  * store size and process memory per 100,000 distinct keys
#include <benchmark/benchmark.h>
#include <httplib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "feedback-handler/http/server.h"
#include "feedback-handler/ingest/aggregator.h"
#include "feedback-handler/otlp/otlp_encode.h"
#include "feedback-handler/store/store.h"
#ifdef PERFHAT_BENCH_POSTGRES
#include "tests/support/postgres_server.h"
#endif

namespace {

using namespace perfhat;
using namespace perfhat::handler;

uint64_t nowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

// A realistic request: 500 spans over 50 functions, parent/child pairs, code.* attributes.
otlp::ExportRequest makeRequest(int spans, int functions, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> lat(std::log(2e6), 1.0);
  otlp::ExportRequest r;
  r.resources.push_back({{"service.name", std::string("bench")},
                         {"service.version", std::string("1.0")},
                         {"host.name", std::string("bench-host")}});
  uint64_t t = nowNs() - 10'000'000'000ULL;
  for (int i = 0; i < spans; ++i) {
    otlp::Span s;
    s.trace_id.resize(16);
    for (auto& c : s.trace_id) c = static_cast<char>(rng());
    s.span_id.resize(8);
    for (auto& c : s.span_id) c = static_cast<char>(rng());
    s.span_id[0] = 1;
    if (i % 2 == 1) {
      s.trace_id = r.spans.back().trace_id;
      s.parent_span_id = r.spans.back().span_id;
    }
    int f = static_cast<int>(rng() % static_cast<uint64_t>(functions));
    s.name = "op";
    s.start_unix_nano = t;
    s.end_unix_nano = t + static_cast<uint64_t>(lat(rng));
    s.attributes = {{"code.function.name", "bench::Service::fn" + std::to_string(f)},
                    {"code.file.path", std::string("/src/bench/service.cc")},
                    {"code.line.number", int64_t{10 + f}}};
    r.spans.push_back(std::move(s));
  }
  return r;
}

// Decoding a request of 500 spans, encoded by `encode`, with `decode`.
template <class Encode, class Decode>
void decodeBench(benchmark::State& state, Encode encode, Decode decode) {
  const std::string body = encode(makeRequest(500, 50, 1));
  for ([[maybe_unused]] auto _ : state) benchmark::DoNotOptimize(decode(body));
  state.SetItemsProcessed(state.iterations() * 500);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(body.size()));
}

void BM_DecodeProtobuf(benchmark::State& state) {
  decodeBench(
      state, [](const otlp::ExportRequest& r) { return otlp::encodeProtobuf(r); },
      [](const std::string& b) { return otlp::decodeProtobuf(b); });
}
BENCHMARK(BM_DecodeProtobuf);

void BM_DecodeJson(benchmark::State& state) {
  decodeBench(
      state, [](const otlp::ExportRequest& r) { return otlp::encodeJson(r); },
      [](const std::string& b) { return otlp::decodeJson(b); });
}
BENCHMARK(BM_DecodeJson);

void BM_Aggregate(benchmark::State& state) {
  otlp::ExportRequest r = makeRequest(500, 50, 2);
  for ([[maybe_unused]] auto _ : state) {
    Batch b;
    benchmark::DoNotOptimize(aggregate(r, b));
  }
  state.SetItemsProcessed(state.iterations() * 500);
}
BENCHMARK(BM_Aggregate);

double processCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

int64_t threadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string tempStore(const char* tag) {
  auto p = std::filesystem::temp_directory_path() /
           ("perfhat-bench-" + std::string(tag) + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return (p / "store.sqlite").string();
}

#ifdef PERFHAT_BENCH_POSTGRES
// One server for the process, started by the first PostgreSQL row; null if it cannot start.
perfhat::testing::PostgresServer* benchPostgres() {
  static std::unique_ptr<perfhat::testing::PostgresServer> pg = []() {
    try {
      return std::make_unique<perfhat::testing::PostgresServer>();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "PostgreSQL rows skipped: %s\n", e.what());
      return std::unique_ptr<perfhat::testing::PostgresServer>();
    }
  }();
  return pg.get();
}
#endif

// Whole ingest path over loopback: HTTP parse, decode, aggregate, durable commit, reply.
// `clients` keep-alive clients post concurrently (one request each per iteration), as several
// service instances exporting at once do; concurrent requests share group commits.
void ingestOverHttp(benchmark::State& state, bool proto, bool postgres = false) {
  const int spans = 500;
  const int clients = static_cast<int>(state.range(0));
  std::string path;
  if (!postgres) {
    path = tempStore(proto ? "ingest-proto" : "ingest-json");
  } else {
#ifdef PERFHAT_BENCH_POSTGRES
    static int databases = 0;
    perfhat::testing::PostgresServer* pg = benchPostgres();
    if (!pg) return state.SkipWithError("no PostgreSQL server");
    path = pg->createDatabase("bench_ingest_" + std::to_string(++databases));
#else
    return state.SkipWithError("built without the PostgreSQL test support");
#endif
  }
  {
    StoreOptions so;
    so.path = path;
    Store store(so);
    ServerOptions opts;
    opts.tokens = {"bench"};
    auto server = std::make_unique<HandlerServer>(store, opts);
    int port = server->bind("127.0.0.1", 0);
    std::thread t([&] { server->run(); });
    std::vector<std::string> bodies;
    for (int i = 0; i < 16; ++i) {
      auto r = makeRequest(spans, 200, static_cast<uint64_t>(i));
      bodies.push_back(proto ? otlp::encodeProtobuf(r) : otlp::encodeJson(r));
    }
    std::vector<std::unique_ptr<httplib::Client>> clis;
    for (int c = 0; c < clients; ++c) {
      clis.push_back(std::make_unique<httplib::Client>("127.0.0.1", port));
      clis.back()->set_bearer_token_auth("bench");
      clis.back()->set_keep_alive(true);
    }
    size_t i = 0;
    std::atomic<int> failures{0};
    // CPU the load generator's own threads spend in the client (encode is done up front):
    // subtracted from the process's CPU, it leaves the handler's share.
    std::atomic<int64_t> client_cpu_ns{0};
    auto post = [&](httplib::Client& cli, size_t body) {
      const int64_t c0 = threadCpuNs();
      auto res = cli.Post("/v1/traces", bodies[body % bodies.size()],
                          proto ? "application/x-protobuf" : "application/json");
      if (!res || res->status != 200) ++failures;
      client_cpu_ns += threadCpuNs() - c0;
    };
    // Process CPU (server workers + this load generator): spans per CPU-second is the
    // "per core" figure, independent of how busy the shared machine is.
    double cpu0 = processCpuSeconds();
    for ([[maybe_unused]] auto _ : state) {
      std::vector<std::thread> senders;
      for (int c = 1; c < clients; ++c) senders.emplace_back(post, std::ref(*clis[c]), i + c);
      post(*clis[0], i);
      for (auto& th : senders) th.join();
      i += static_cast<size_t>(clients);
    }
    if (failures) state.SkipWithError("ingest failed");
    // Stopping the handler writes what write-behind still holds (its last checkpoint): that
    // work belongs to these spans, so it is inside the CPU measured.
    server->stop();
    t.join();
    server.reset();
    state.SetItemsProcessed(state.iterations() * spans * clients);
    const double total_spans = static_cast<double>(state.iterations() * spans * clients);
    const double process_cpu = processCpuSeconds() - cpu0;
    state.counters["spans_per_cpu_s"] = total_spans / process_cpu;
    // The handler alone (process CPU minus the client threads' CPU): what the goal is about.
    state.counters["server_spans_per_cpu_s"] =
        total_spans / (process_cpu - static_cast<double>(client_cpu_ns.load()) / 1e9);
  }
  if (!postgres) std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}
void BM_IngestHttpProtobuf(benchmark::State& s) { ingestOverHttp(s, true); }
void BM_IngestHttpJson(benchmark::State& s) { ingestOverHttp(s, false); }
// PostgreSQL (write-through: every group commits its aggregates before the 2xx). The server
// runs on the same two cores, and its CPU is not in the handler's figure: see wall time too.
void BM_IngestHttpProtobufPostgres(benchmark::State& s) { ingestOverHttp(s, true, true); }
BENCHMARK(BM_IngestHttpProtobuf)
    ->ArgName("clients")
    ->Arg(1)
    ->Arg(4)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_IngestHttpJson)
    ->ArgName("clients")
    ->Arg(1)
    ->Arg(4)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_IngestHttpProtobufPostgres)
    ->ArgName("clients")
    ->Arg(1)
    ->Arg(4)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// A store holding `keys` distinct functions, each with a few minutes of data and a call site.
void fillStore(Store& store, int keys) {
  std::mt19937_64 rng(9);
  std::lognormal_distribution<double> lat(std::log(2e6), 1.0);
  const int64_t bucket = static_cast<int64_t>(nowNs()) / kBucketNs - 30;
  for (int k0 = 0; k0 < keys; k0 += 5000) {
    Batch b;
    for (int k = k0; k < std::min(keys, k0 + 5000); ++k) {
      std::string key = "bench::Service::fn" + std::to_string(k) + "(int)";
      for (int m = 0; m < 3; ++m) {
        AggValue& v =
            b.aggregates[AggKey{AggKind::kFunction, key, "", bucket + m, "bench", "1.0", "", ""}];
        for (int i = 0; i < 20; ++i) v.sketch.add(lat(rng));
      }
      AggValue& c = b.aggregates[AggKey{AggKind::kCallSite, key, "bench::main()", bucket, "bench",
                                        "1.0", "", ""}];
      for (int i = 0; i < 10; ++i) c.sketch.add(lat(rng));
      c.x1 = 5;
      b.functions[key] = FunctionInfo{"", "/src/bench.cc", k, static_cast<int64_t>(nowNs())};
    }
    store.write(b);
  }
}

void BM_BatchGet10kKeys(benchmark::State& state) {
  std::string path = tempStore("batchget");
  {
    StoreOptions so;
    so.path = path;
    so.read_threads = static_cast<int>(state.range(1));  // 0: one per core (the default)
    Store store(so);
    fillStore(store, 10000);
    BatchGetRequest req;
    for (int k = 0; k < 10000; ++k)
      req.keys.push_back("bench::Service::fn" + std::to_string(k) + "(int)");
    const bool http = state.range(0) == 1;
    std::unique_ptr<HandlerServer> server;
    std::thread t;
    std::unique_ptr<httplib::Client> cli;
    std::string body = serialize(req);
    if (http) {
      server = std::make_unique<HandlerServer>(store, ServerOptions{});
      int port = server->bind("127.0.0.1", 0);
      t = std::thread([&] { server->run(); });
      cli = std::make_unique<httplib::Client>("127.0.0.1", port);
      cli->set_read_timeout(std::chrono::seconds(120));
    }
    double cpu0 = processCpuSeconds();
    for ([[maybe_unused]] auto _ : state) {
      if (http) {
        auto res = cli->Post("/v1/feedback:batchGet", body, "application/json");
        if (!res || res->status != 200) state.SkipWithError("batchGet failed");
      } else {
        auto r = store.batchGet(req);
        if (r.items.size() != 10000) state.SkipWithError("missing items");
      }
    }
    state.SetItemsProcessed(state.iterations() * 10000);
    state.counters["process_cpu_ms_per_call"] =
        (processCpuSeconds() - cpu0) * 1e3 / static_cast<double>(state.iterations());
    state.SetLabel(std::string(http ? "HTTP, JSON response" : "store API") +
                   (state.range(1) == 1 ? ", 1 thread" : ", default threads"));
    if (server) {
      server->stop();
      t.join();
    }
  }
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}
// Args: {0 = store API / 1 = HTTP, read threads (1 = one thread: the baseline; 0 = default)}.
BENCHMARK(BM_BatchGet10kKeys)
    ->Args({0, 1})
    ->Args({0, 0})
    ->Args({1, 1})
    ->Args({1, 0})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

long rssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

// Memory per 100,000 distinct keys: bytes on disk (SQLite, incl. WAL) and the in-memory
// aggregation of one request touching all of them.
void BM_MemoryPer100kKeys(benchmark::State& state) {
  for ([[maybe_unused]] auto _ : state) {
    std::string path = tempStore("memory");
    long rss0 = rssKb();
    {
      StoreOptions so;
      so.path = path;
      Store store(so);
      fillStore(store, 100000);
      state.counters["rss_delta_MB"] = static_cast<double>(rssKb() - rss0) / 1024.0;
    }
    uint64_t disk = 0;
    for (auto& e : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path())) {
      disk += e.file_size();
    }
    state.counters["disk_MB"] = static_cast<double>(disk) / 1048576.0;
    state.counters["disk_bytes_per_key"] = static_cast<double>(disk) / 100000.0;
    std::filesystem::remove_all(std::filesystem::path(path).parent_path());

    long rss1 = rssKb();
    Batch b;
    std::mt19937_64 rng(3);
    std::lognormal_distribution<double> lat(std::log(2e6), 1.0);
    for (int k = 0; k < 100000; ++k) {
      AggValue& v = b.aggregates[AggKey{
          AggKind::kFunction, "bench::fn" + std::to_string(k) + "(int)", "", 1, "s", "v", "", ""}];
      for (int i = 0; i < 20; ++i) v.sketch.add(lat(rng));
    }
    state.counters["batch_bytes_per_key"] = static_cast<double>(rssKb() - rss1) * 1024.0 / 100000.0;
  }
}
BENCHMARK(BM_MemoryPer100kKeys)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
