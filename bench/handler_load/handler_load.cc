// handler_load: does a perfhat-handler keep serving readers and health checks while other
// clients hold its connections? Starts the given handler binary with default settings on a
// loopback port and measures, each on a fresh connection:
//   1. POST /v1/feedback:batchGet latency while N keep-alive exporters post OTLP batches
//      back to back (each waits --exporter-gap-ms between its posts);
//   2. GET /healthz latency while M connections send their headers one byte at a time.
// Each also without the load, as a reference. Goals (issue #19): p99 within 100 ms for both.
//
//   handler_load --handler build/feedback-handler/perfhat-handler [--exporters 12] [--slow 100]
//                [--requests 200] [--exporter-gap-ms 10] [--timeout-s 10] [--row-seconds 30]
// Loopback only; every loop is bounded by a request count and a timeout.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/cli.h"
#include "common/feedback.h"
#include "feedback-handler/otlp/otlp.h"
#include "feedback-handler/otlp/otlp_encode.h"

namespace {

using namespace perfhat;

using Clock = std::chrono::steady_clock;
constexpr const char* kToken = "bench";

struct Options {
  std::string handler;
  int exporters = 12;
  int slow = 100;
  int requests = 200;
  int exporter_gap_ms = 10;
  int timeout_s = 10;
  int row_seconds = 30;  // a row ends after this long even if requests are left
};

class Handler {
 public:
  explicit Handler(const std::string& bin) {
    char tmpl[] = "/tmp/handler-load-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDERR_FILENO);
      std::string store = dir_ + "/d.sqlite";
      execl(bin.c_str(), bin.c_str(), "--mode", "deployed", "--store", store.c_str(), "--token",
            kToken, "--listen", "127.0.0.1:0", static_cast<char*>(nullptr));
      _exit(127);
    }
    close(fds[1]);
    err_ = fds[0];
    std::string out;
    static const std::regex kListening(R"(listening on [0-9.]+:([0-9]+))");
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < deadline) {
      pollfd p{err_, POLLIN, 0};
      if (poll(&p, 1, 200) <= 0) continue;
      char buf[512];
      ssize_t n = read(err_, buf, sizeof buf);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
      std::smatch m;
      if (std::regex_search(out, m, kListening)) {
        port_ = std::stoi(m[1]);
        return;
      }
    }
    throw std::runtime_error("handler did not start: " + out);
  }
  ~Handler() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    close(err_);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  int port() const { return port_; }

 private:
  std::string dir_;
  pid_t pid_ = -1;
  int err_ = -1;
  int port_ = 0;
};

otlp::ExportRequest spans(int n, uint64_t seed) {
  otlp::ExportRequest r;
  r.resources.push_back({{"service.name", std::string("load")}, {"host.name", std::string("h")}});
  const uint64_t now =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count());
  for (int i = 0; i < n; ++i) {
    otlp::Span s;
    s.trace_id.assign(16, static_cast<char>(seed + 1));
    s.span_id.assign(8, static_cast<char>(i + 1));
    s.trace_id[0] = static_cast<char>(i);
    s.name = "op";
    s.start_unix_nano = now - 2'000'000'000ULL;
    s.end_unix_nano = s.start_unix_nano + 1'000'000ULL + static_cast<uint64_t>(i) * 1000;
    s.attributes = {{"code.function.name", "load::fn" + std::to_string(i % 50)}};
    r.spans.push_back(std::move(s));
  }
  return r;
}

struct Latencies {
  std::vector<double> ms;
  int failed = 0;
  void print(const char* what) const {
    std::vector<double> v = ms;
    std::sort(v.begin(), v.end());
    auto at = [&](double q) {
      return v.empty() ? -1.0 : v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))];
    };
    std::printf("%-52s n=%zu failed=%d  p50 %.1f ms  p99 %.1f ms  max %.1f ms\n", what, v.size(),
                failed, at(0.5), at(0.99), v.empty() ? -1.0 : v.back());
  }
};

httplib::Client client(int port, int timeout_s) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(std::chrono::seconds(timeout_s));
  c.set_read_timeout(std::chrono::seconds(timeout_s));
  c.set_write_timeout(std::chrono::seconds(timeout_s));
  c.set_bearer_token_auth(kToken);
  return c;
}

// Each request on a new connection, as a newly started editor or a health checker makes them.
Latencies measure(const Options& o, int port, bool batch_get) {
  BatchGetRequest req;
  for (int i = 0; i < 50; ++i) req.keys.push_back("load::fn" + std::to_string(i));
  const std::string body = serialize(req);
  Latencies l;
  const auto row_end = Clock::now() + std::chrono::seconds(o.row_seconds);
  for (int i = 0; i < o.requests && Clock::now() < row_end; ++i) {
    httplib::Client c = client(port, o.timeout_s);
    const auto t0 = Clock::now();
    auto res =
        batch_get ? c.Post("/v1/feedback:batchGet", body, "application/json") : c.Get("/healthz");
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (res && res->status == 200) {
      l.ms.push_back(ms);
    } else {
      ++l.failed;
    }
  }
  return l;
}

int connectTo(int port) {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(s);
    return -1;
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  setvbuf(stdout, nullptr, _IOLBF, 0);
  Options o;
  CLI::App app(
      "Reader and health-check latency of a perfhat-handler while other clients hold its\n"
      "connections (keep-alive exporters, slow senders); loopback only.",
      "handler_load");
  perfhat::cli::configure(app, "0.1.0");
  app.add_option("--handler", o.handler, "the perfhat-handler binary to start")->required();
  app.add_option("--exporters", o.exporters, "keep-alive exporters posting OTLP batches")
      ->check(perfhat::cli::nonNegativeNumber())
      ->capture_default_str();
  app.add_option("--slow", o.slow, "connections sending their headers one byte at a time")
      ->check(perfhat::cli::nonNegativeNumber())
      ->capture_default_str();
  app.add_option("--requests", o.requests, "measured requests per row")
      ->check(perfhat::cli::positiveInteger())
      ->capture_default_str();
  app.add_option("--exporter-gap-ms", o.exporter_gap_ms, "each exporter's pause between posts")
      ->check(perfhat::cli::nonNegativeNumber())
      ->capture_default_str();
  app.add_option("--timeout-s", o.timeout_s, "client timeout per request")
      ->check(perfhat::cli::positiveInteger())
      ->capture_default_str();
  app.add_option("--row-seconds", o.row_seconds,
                 "a row ends after this long even if requests are left")
      ->check(perfhat::cli::positiveInteger())
      ->capture_default_str();
  perfhat::cli::parse(app, argc, argv);
  Handler h(o.handler);
  const int port = h.port();
  const std::string batch = otlp::encodeProtobuf(spans(200, 1));
  {
    httplib::Client c = client(port, o.timeout_s);
    auto r = c.Post("/v1/traces", batch, "application/x-protobuf");
    if (!r || r->status != 200) {
      std::fprintf(stderr, "could not ingest the seed batch\n");
      return 1;
    }
  }
  std::printf("handler %s, %d requests per row, client timeout %d s\n", o.handler.c_str(),
              o.requests, o.timeout_s);
  measure(o, port, true).print("batchGet (50 keys), idle handler");

  // 1. Busy keep-alive exporters.
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> posted{0}, post_failed{0};
  std::vector<std::thread> exporters;
  for (int e = 0; e < o.exporters; ++e) {
    exporters.emplace_back([&, e] {
      httplib::Client c = client(port, o.timeout_s);
      c.set_keep_alive(true);
      for (int n = 0; n < 1'000'000 && !stop; ++n) {
        auto r = c.Post("/v1/traces", batch, "application/x-protobuf");
        (r && r->status == 200 ? posted : post_failed)++;
        std::this_thread::sleep_for(std::chrono::milliseconds(o.exporter_gap_ms));
      }
      (void)e;
    });
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const auto t0 = Clock::now();
  const uint64_t posted0 = posted;
  Latencies under_export = measure(o, port, true);
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  const uint64_t posts = posted - posted0;
  stop = true;
  for (auto& t : exporters) t.join();
  char what[128];
  std::snprintf(what, sizeof what, "batchGet (50 keys), %d keep-alive exporters", o.exporters);
  under_export.print(what);
  std::printf("  exporters meanwhile: %.0f posts/s (200 spans each), %llu failed\n",
              static_cast<double>(posts) / secs, static_cast<unsigned long long>(post_failed));

  // 2. Slow connections dripping their headers.
  measure(o, port, false).print("healthz, idle handler");
  std::vector<int> slow;
  for (int i = 0; i < o.slow; ++i) {
    int s = connectTo(port);
    if (s < 0) break;
    const char* start = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
    if (send(s, start, std::strlen(start), MSG_NOSIGNAL) < 0) {
      close(s);
      continue;
    }
    slow.push_back(s);
  }
  std::atomic<bool> drip_stop{false};
  std::thread dripper([&] {
    for (int round = 0; round < 100000 && !drip_stop; ++round) {
      for (int s : slow) send(s, "X", 1, MSG_NOSIGNAL);  // one header byte, never a line end
      for (int i = 0; i < 5 && !drip_stop; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  Latencies under_slow = measure(o, port, false);
  drip_stop = true;
  dripper.join();
  for (int s : slow) close(s);
  std::snprintf(what, sizeof what, "healthz, %zu slow connections (1 byte/500 ms)", slow.size());
  under_slow.print(what);
  return 0;
}
