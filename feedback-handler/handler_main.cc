// perfhat-handler: the feedback handler (DESIGN §5, §12).
//   perfhat-handler --mode deployed --listen 127.0.0.1:4318 --store PATH.sqlite --token T
//   perfhat-handler --mode local    --listen 127.0.0.1:4319 --store PATH.sqlite --upstream
//   URL[,TOKEN]
// Prints "listening on HOST:PORT" on stderr once it accepts connections (port 0 = pick one).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "common/cli.h"
#include "feedback-handler/http/server.h"
#include "feedback-handler/store/store.h"
#include "feedback-handler/sync/syncer.h"
#include "feedback-handler/variants/release_catalog.h"

#ifndef PERFHAT_VERSION
#define PERFHAT_VERSION "0.0.0"
#endif

namespace {

using namespace perfhat::handler;

constexpr const char* kAbout =
    "Feedback handler: receives OTLP traces (deployed) or pulls upstream handlers (local), keeps\n"
    "per-function latency sketches in SQLite and serves them to perfhat-lsp.";
constexpr const char* kFooter =
    "TLS: terminate it in a reverse proxy or an OpenTelemetry Collector in front of the handler.";

struct Args {
  std::string mode;
  std::string listen;
  std::string store;
  std::vector<std::string> tokens, read_tokens, upstreams;
  bool allow_unauth = false;
  double sync_interval = 30;
  double sync_deadline = 120;
  size_t sync_max_response = 256u << 20;
  double auth_failures_per_minute = 12;
  size_t max_connections = 512;
  size_t max_connections_per_peer = 256;
  double header_timeout_ms = 10000;
  double body_timeout_ms = 60000;
  double keep_alive_ms = 5000;
  size_t max_change_waiters = 64;
  double retention_days = 30;
  std::string releases;  // --releases DIR
  double range_hours = 24;
  size_t max_body = 16u << 20;
  double rate_limit = 0;
  int threads = 8;
  int read_threads = 0;
  GroupCommitOptions commit;
};

[[noreturn]] void usageError(const std::string& msg) {
  perfhat::cli::usageError("perfhat-handler", msg);
}

double number(const std::string& flag, const std::string& v) {
  const perfhat::Result<double> d = perfhat::parseNonNegative(v);
  if (!d) usageError(flag + " " + d.error);
  return d.value;
}

// The command line's options, with their help. Numbers are read as non-negative doubles (so
// 1e6 works for sizes); a count is stored as its field's type.
void addOptions(CLI::App& app, Args& a) {
  using perfhat::cli::repeatable;
  const CLI::Validator number = perfhat::cli::nonNegativeNumber();
  auto num = [&](const char* name, double& into, const char* help) {
    app.add_option(name, into, help)->check(number);
  };
  auto onNumber = [&](const char* name, std::function<void(double)> set, const char* help) {
    app.add_option_function<double>(name, std::move(set), help)->check(number);
  };
  auto count = [&](const char* name, auto& into, const char* help) {
    onNumber(
        name, [&into](double v) { into = static_cast<std::remove_reference_t<decltype(into)>>(v); },
        help);
  };
  // A std::chrono duration field, given as a whole number of its units.
  auto duration = [&](const char* name, auto& into, const char* help) {
    onNumber(
        name,
        [&into](double v) {
          into = std::remove_reference_t<decltype(into)>(static_cast<int64_t>(v));
        },
        help);
  };
  app.add_option("--mode", a.mode,
                 "deployed|local. deployed: OTLP ingest + read API; local: pulls --upstream(s)");
  app.add_option("--listen", a.listen,
                 "HOST:PORT, default 127.0.0.1:4318 (deployed) / 127.0.0.1:4319 (local); port 0 "
                 "picks a free port; the real one is printed as \"listening on H:P\"");
  app.add_option("--releases", a.releases,
                 "DIR: release manifests of perfhat-plan variants (its --history DIR, files "
                 "release-<id>.json); reads then weigh counts by the exposure of each function "
                 "(docs/plan.md \"Exposure\")");
  app.add_option("--store", a.store,
                 "PATH|URL: SQLite file (created if absent), or postgresql://USER@HOST/DB to share "
                 "one PostgreSQL among deployed replicas (password from PGPASSWORD or ~/.pgpass)");
  repeatable(app.add_option(
      "--token", a.tokens,
      "bearer token for reads and writes (repeatable; env PERFHAT_HANDLER_TOKENS=T1,T2). "
      "Deployed mode requires one unless --allow-unauthenticated; so does either mode "
      "listening on an address other than loopback"));
  repeatable(
      app.add_option("--read-token", a.read_tokens, "bearer token for reads only (repeatable)"));
  app.add_flag("--allow-unauthenticated", a.allow_unauth,
               "run without tokens although deployed, or listening beyond loopback: anyone who "
               "reaches the port may read, write and (local) trigger pulls with the upstream "
               "tokens (trusted networks, tests)");
  repeatable(app.add_option("--upstream", a.upstreams,
                            "URL[,TOKEN] local mode: an upstream handler (repeatable)"));
  num("--sync-interval", a.sync_interval, "local mode: seconds between pulls (default 30)");
  num("--sync-deadline", a.sync_deadline,
      "local mode: one upstream's whole pull ends after S seconds, however slowly it answers; "
      "pages already pulled are kept (default 120)");
  count("--sync-max-response-bytes", a.sync_max_response,
        "local mode: largest upstream answer after gunzip (default 256 MiB)");
  num("--retention-days", a.retention_days, "keep aggregates this long (default 30)");
  num("--range-hours", a.range_hours, "default read window (default 24)");
  count("--max-body-bytes", a.max_body,
        "largest request body on the wire (default 16 MiB) → else 413");
  num("--rate-limit", a.rate_limit,
      "requests/s per client (its token; without tokens, its address) (default 0 = unlimited) "
      "→ else 429");
  num("--auth-failures-per-minute", a.auth_failures_per_minute,
      "failed authentications allowed per client address, after a burst of 20 (default 12; 0 = "
      "unlimited) → else 429 before the token is checked. Behind a proxy, all clients share the "
      "proxy's address");
  count("--threads", a.threads,
        "connection threads kept ready (default 8); more start on demand, one per open "
        "connection, and idle ones exit after 30 s");
  count("--max-connections", a.max_connections,
        "open connections in total (default 512) → else 503 and close");
  count("--max-connections-per-peer", a.max_connections_per_peer,
        "open connections per client address (default 256; 0 = no cap)");
  num("--header-timeout-ms", a.header_timeout_ms,
      "a request's line and headers must arrive within N ms of its first byte (default 10000) "
      "→ else 408 and close");
  num("--body-timeout-ms", a.body_timeout_ms,
      "and its body within N ms after the headers (default 60000)");
  num("--keep-alive-ms", a.keep_alive_ms, "an idle connection is closed after N ms (default 5000)");
  count("--max-change-waiters", a.max_change_waiters,
        "parked GET /v1/changes?wait_ms= requests (default 64) → else 429");
  count("--read-threads", a.read_threads,
        "threads reading and writing one large batchGet (2048 keys or more) in parallel, each on "
        "its own SQLite read connection (default 0: one per core, at most 4; 1 = the request's "
        "own thread only)");
  duration("--commit-delay-us", a.commit.max_batch_delay,
           "ingest group commit: wait up to N µs for more requests to share a durable commit "
           "(default 0: requests that overlap a commit share the next one, no added latency)");
  onNumber(
      "--commit-max-pending",
      [&a](double v) { a.commit.max_pending = std::max<size_t>(1, static_cast<size_t>(v)); },
      "ingest requests queued for the committer before clients block (default 256)");
  duration(
      "--checkpoint-ms", a.commit.checkpoint_interval,
      "SQLite ingest write-behind: a request is acknowledged once its body is durable in the "
      "store's intake log; its aggregates are written at most N ms later (and before any read), "
      "each row once per checkpoint (default 1000; 0 = write every request's aggregates before "
      "its 2xx)");
}

Args parse(int argc, char** argv) {
  Args a;
  CLI::App app(kAbout, "perfhat-handler");
  perfhat::cli::configure(app, PERFHAT_VERSION);
  app.footer(kFooter);
  addOptions(app, a);
  perfhat::cli::parse(app, argc, argv);
  if (a.mode != "deployed" && a.mode != "local") usageError("--mode must be deployed or local");
  if (a.store.empty()) usageError("--store PATH is required");
  if (a.listen.empty()) a.listen = a.mode == "deployed" ? "127.0.0.1:4318" : "127.0.0.1:4319";
  if (a.tokens.empty()) {
    if (const char* env = std::getenv("PERFHAT_HANDLER_TOKENS"); env && *env) {
      std::string s = env;
      for (size_t p = 0; p <= s.size();) {
        size_t c = s.find(',', p);
        if (c == std::string::npos) c = s.size();
        if (c > p) a.tokens.push_back(s.substr(p, c - p));
        p = c + 1;
      }
    }
  }
  if (a.mode == "deployed" && a.tokens.empty() && a.read_tokens.empty() && !a.allow_unauth) {
    usageError("deployed mode requires --token (or --allow-unauthenticated on a trusted network)");
  }
  if (a.mode == "local" && a.upstreams.empty())
    usageError("local mode needs at least one --upstream");
  if (a.sync_interval <= 0) usageError("--sync-interval must be > 0");
  if (a.sync_deadline <= 0) usageError("--sync-deadline must be > 0");
  if (a.max_connections < 1) usageError("--max-connections must be at least 1");
  if (a.header_timeout_ms < 1 || a.body_timeout_ms < 1 || a.keep_alive_ms < 1) {
    usageError("--header-timeout-ms, --body-timeout-ms and --keep-alive-ms must be at least 1");
  }
  return a;
}

// 127.0.0.0/8, ::1, ::ffff:127.x.x.x and "localhost". Anything else (0.0.0.0, a host name, an
// interface address) may be reachable from other machines.
bool isLoopback(std::string host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

// Each connection holds a descriptor: lift the soft limit to the hard one, if needed.
void raiseDescriptorLimit(size_t wanted) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur >= wanted) return;
  lim.rlim_cur = std::min<rlim_t>(lim.rlim_max, wanted);
  setrlimit(RLIMIT_NOFILE, &lim);
  if (lim.rlim_cur < wanted) {
    std::fprintf(stderr,
                 "perfhat-handler: warning: open files limited to %llu; --max-connections "
                 "should stay well below it\n",
                 static_cast<unsigned long long>(lim.rlim_cur));
  }
}

// The store the arguments name, with expired rows purged; nullptr (the reason printed) when it
// cannot be opened.
std::unique_ptr<Store> openStore(const Args& args) {
  try {
    StoreOptions so;
    so.path = args.store;
    so.retention_minutes = static_cast<int64_t>(args.retention_days * 24 * 60);
    so.default_range_minutes = std::max<int64_t>(1, static_cast<int64_t>(args.range_hours * 60));
    so.read_threads = args.read_threads;
    if (!args.releases.empty()) so.releases = std::make_shared<ReleaseCatalog>(args.releases);
    auto store = std::make_unique<Store>(so);
    store->purge();
    return store;
  } catch (const StoreError& e) {
    std::fprintf(stderr, "perfhat-handler: %s\n", e.what());
    return nullptr;
  }
}

ServerOptions serverOptions(const Args& args) {
  ServerOptions opts;
  opts.mode = args.mode;
  opts.version = PERFHAT_VERSION;
  opts.tokens = args.tokens;
  opts.read_tokens = args.read_tokens;
  opts.max_body_bytes = args.max_body;
  opts.rate_limit.rate_per_s = args.rate_limit;
  opts.auth_failures.rate_per_s = args.auth_failures_per_minute / 60;
  opts.max_change_waiters = args.max_change_waiters;
  opts.front.min_threads = static_cast<size_t>(std::max(1, args.threads));
  opts.front.max_connections = args.max_connections;
  opts.front.max_connections_per_peer = args.max_connections_per_peer;
  auto ms = [](double v) { return std::chrono::milliseconds(static_cast<int64_t>(v)); };
  opts.front.header_timeout = ms(args.header_timeout_ms);
  opts.front.body_timeout = ms(args.body_timeout_ms);
  opts.front.keep_alive_idle = ms(args.keep_alive_ms);
  opts.ingest.commit = args.commit;
  return opts;
}

}  // namespace

int main(int argc, char** argv) {
  Args args = parse(argc, argv);
  auto colon = args.listen.rfind(':');
  if (colon == std::string::npos) usageError("--listen must be HOST:PORT");
  std::string host = args.listen.substr(0, colon);
  int port = static_cast<int>(number("--listen port", args.listen.substr(colon + 1)));
  if (port > 65535) usageError("--listen port out of range");
  const bool has_tokens = !args.tokens.empty() || !args.read_tokens.empty();
  if (!has_tokens && !isLoopback(host)) {
    if (!args.allow_unauth) {
      usageError("refusing to listen on " + host +
                 " without a token: anyone who reaches it could read and write its data" +
                 (args.mode == "local" ? " and make it call the upstreams with their tokens" : "") +
                 ". Pass --token, listen on 127.0.0.1, or add --allow-unauthenticated on a "
                 "trusted network");
    }
    std::fprintf(stderr,
                 "perfhat-handler: warning: listening on %s without authentication "
                 "(--allow-unauthenticated)\n",
                 host.c_str());
  }
  raiseDescriptorLimit(args.max_connections + 256);

  // Block termination signals in every thread; one thread waits for them and stops the server.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::vector<Upstream> upstreams;
  try {
    for (const auto& u : args.upstreams) upstreams.push_back(parseUpstream(u));
  } catch (const std::invalid_argument& e) {
    usageError(e.what());
  }

  std::unique_ptr<Store> store = openStore(args);
  if (!store) return 1;

  std::unique_ptr<Syncer> syncer;
  if (args.mode == "local") {
    SyncOptions so;
    so.interval_s = args.sync_interval;
    so.pull_deadline_s = args.sync_deadline;
    so.max_response_bytes = std::max<size_t>(1, args.sync_max_response);
    syncer = std::make_unique<Syncer>(*store, upstreams, so);
  }

  const ServerOptions opts = serverOptions(args);
  // Constructing the server replays what a crash left in the ingest intake log.
  std::unique_ptr<HandlerServer> owned;
  int bound;
  try {
    owned = std::make_unique<HandlerServer>(*store, opts, syncer.get());
    bound = owned->bind(host, port);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "perfhat-handler: %s\n", e.what());
    return 1;
  }
  HandlerServer& server = *owned;

  if (syncer) syncer->start();  // before the signal thread, which may stop it
  std::atomic<bool> stopping{false};
  std::thread signals([&] {
    int sig = 0;
    sigwait(&sigs, &sig);
    stopping = true;
    // A pull in progress (the loop's, or a POST /v1/sync's, which the server waits for) is
    // interrupted first, so a slow upstream cannot hold the shutdown.
    if (syncer) syncer->stop();
    server.stop();
  });
  // Retention runs hourly off the request path.
  std::mutex mu;
  std::condition_variable cv;
  std::thread maintenance([&] {
    std::unique_lock lock(mu);
    while (!cv.wait_for(lock, std::chrono::hours(1), [&] { return stopping.load(); })) {
      try {
        store->purge();
      } catch (const StoreError& e) {
        std::fprintf(stderr, "perfhat-handler: retention purge failed: %s\n", e.what());
      }
    }
  });

  std::fprintf(stderr, "listening on %s:%d\n", host.c_str(), bound);
  std::fflush(stderr);
  server.run();

  // Wakes the signal thread's sigwait (SIGTERM is blocked in every thread, so nothing is killed).
  if (!stopping.exchange(true)) {
    pthread_kill(signals.native_handle(), SIGTERM);  // NOLINT(bugprone-bad-signal-to-kill-thread)
  }
  signals.join();
  { std::lock_guard lock(mu); }
  cv.notify_all();
  maintenance.join();
  if (syncer) syncer->stop();
  owned.reset();  // the last ingest checkpoint: the store holds everything acknowledged
  std::fprintf(stderr, "perfhat-handler: stopped\n");
  return 0;
}
