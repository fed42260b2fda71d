#include "feedback-handler/sync/syncer.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <regex>
#include <stdexcept>

#include "feedback-handler/sync/export_json.h"

namespace perfhat::handler {
namespace {

int64_t steadyNow() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string cursorMetaName(const std::string& url) { return "sync.cursor:" + url; }

}  // namespace

Upstream parseUpstream(const std::string& spec) {
  Upstream u;
  auto comma = spec.find(',');
  u.url = spec.substr(0, comma);
  if (comma != std::string::npos) u.token = spec.substr(comma + 1);
  while (!u.url.empty() && u.url.back() == '/') u.url.pop_back();
  static const std::regex kUrl(R"(^https?://[A-Za-z0-9.\-\[\]:]+(:[0-9]+)?$)");
  if (!std::regex_match(u.url, kUrl)) {
    throw std::invalid_argument("upstream must be http(s)://HOST[:PORT][,TOKEN], got '" + spec +
                                "'");
  }
  return u;
}

Syncer::Syncer(Store& store, std::vector<Upstream> upstreams, SyncOptions options)
    : store_(store), upstreams_(std::move(upstreams)), options_(options) {
  status_.resize(upstreams_.size());
  next_attempt_ns_.assign(upstreams_.size(), 0);
  for (size_t i = 0; i < upstreams_.size(); ++i) {
    status_[i].url = upstreams_[i].url;
    status_[i].cursor = static_cast<uint64_t>(store_.meta(cursorMetaName(upstreams_[i].url)));
  }
}

Syncer::~Syncer() { stop(); }

void Syncer::start() {
  if (upstreams_.empty() || thread_.joinable()) return;
  thread_ = std::thread([this] { loop(); });
}

void Syncer::stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notifyAll();
  cancel_cv_.notifyAll();
  if (thread_.joinable()) thread_.join();
}

void Syncer::loop() {
  MutexLock lock(mu_);
  while (!stopping_) {
    int64_t now = steadyNow();
    std::vector<size_t> due;
    for (size_t i = 0; i < upstreams_.size(); ++i) {
      if (next_attempt_ns_[i] <= now) due.push_back(i);
    }
    lock.unlock();
    {
      MutexLock round(pull_mu_);
      for (size_t i : due) {
        if (isStopping()) break;
        pull(i);
      }
    }
    lock.lock();
    int64_t wake = INT64_MAX;
    for (int64_t t : next_attempt_ns_) wake = std::min(wake, t);
    auto wait = std::chrono::nanoseconds(std::max<int64_t>(wake - steadyNow(), 1'000'000));
    const auto until = std::chrono::steady_clock::now() + wait;
    while (!stopping_ && cv_.waitUntil(lock, until) != std::cv_status::timeout) {
    }
  }
}

void Syncer::pull(size_t i) {
  const Upstream& up = upstreams_[i];
  uint64_t cursor;
  {
    MutexLock lock(mu_);
    cursor = status_[i].cursor;
  }
  std::string error;
  uint64_t rows = 0;
  httplib::Client cli(up.url);
  cli.set_tcp_nodelay(true);  // no delayed-ACK wait between header and body writes
  // The watchdog stops the client (shutting its socket ends a blocked read at once) when the
  // pull's deadline passes or the syncer stops; it repeats until the pull ends, since a stop
  // between two requests has nothing to interrupt.
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(options_.pull_deadline_s));
  bool done = false;  // guarded by mu_
  std::atomic<bool> expired{false};
  std::thread watchdog([&] {
    MutexLock lock(mu_);
    while (!done) {
      if (stopping_ || std::chrono::steady_clock::now() >= deadline) {
        expired = true;
        lock.unlock();
        cli.stop();
        lock.lock();
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
        while (!done && cancel_cv_.waitUntil(lock, until) != std::cv_status::timeout) {
        }
      } else {
        while (!done && !stopping_ &&
               cancel_cv_.waitUntil(lock, deadline) != std::cv_status::timeout) {
        }
      }
    }
  });
  // Ends the watchdog before `cli` goes, however this function is left.
  auto stopWatchdog = [&](void*) {
    {
      MutexLock lock(mu_);
      done = true;
    }
    cancel_cv_.notifyAll();
    watchdog.join();
  };
  std::unique_ptr<void, decltype(stopWatchdog)> disarm(&done, stopWatchdog);
  try {
    pullPages(cli, i, cursor, expired, rows);
  } catch (const std::exception& e) {
    error = e.what();
  }
  disarm.reset();
  recordPull(i, rows, error);
}

void Syncer::pullPages(httplib::Client& cli, size_t i, uint64_t cursor,
                       const std::atomic<bool>& expired, uint64_t& rows) {
  const Upstream& up = upstreams_[i];
  auto to = std::chrono::duration<double>(options_.timeout_s);
  cli.set_connection_timeout(std::chrono::duration_cast<std::chrono::microseconds>(to));
  cli.set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(to));
  if (!up.token.empty()) cli.set_bearer_token_auth(up.token.c_str());
  httplib::Headers headers{{"Accept-Encoding", "gzip"}};
  for (int page = 0; page < 100000; ++page) {  // bounded; each page advances the cursor
    std::string body;
    bool too_big = false;
    auto res = cli.Get(("/v1/export?since=" + std::to_string(cursor) +
                        "&limit=" + std::to_string(options_.page_rows))
                           .c_str(),
                       headers, [&](const char* data, size_t len) {
                         if (body.size() + len > options_.max_response_bytes) {
                           too_big = true;
                           return false;
                         }
                         body.append(data, len);
                         return true;
                       });
    if (too_big) {
      throw std::runtime_error("answer larger than " + std::to_string(options_.max_response_bytes) +
                               " bytes (after gunzip); refused");
    }
    if (expired) {
      throw std::runtime_error(isStopping() ? "stopped"
                                            : "no complete answer within the pull deadline");
    }
    if (!res) throw std::runtime_error("unreachable: " + httplib::to_string(res.error()));
    if (res->status != 200) {
      throw std::runtime_error("HTTP " + std::to_string(res->status) + ": " + body.substr(0, 200));
    }
    ExportPage p = parseExport(body);
    if (p.cursor < cursor)
      throw std::runtime_error("upstream cursor went backwards (store reset?)");
    Batch b;
    for (auto& [k, v] : p.rows.aggregates) {
      AggKey key = k;
      // Chains of local handlers keep the full provenance, so nothing is merged twice.
      key.origin = k.origin.empty() ? up.url : up.url + ">" + k.origin;
      b.aggregates.emplace(std::move(key), std::move(v));
    }
    b.functions = std::move(p.rows.functions);
    b.hosts = std::move(p.rows.hosts);
    b.meta[cursorMetaName(up.url)] = static_cast<int64_t>(p.cursor);
    rows += b.aggregates.size();
    store_.write(b, WriteMode::kReplace);
    {
      MutexLock hook(hook_mu_);
      if (on_commit_) on_commit_();  // e.g. wake /v1/changes long-polls
    }
    cursor = p.cursor;
    {
      MutexLock lock(mu_);
      status_[i].cursor = cursor;
    }
    if (!p.more) break;
  }
}

void Syncer::recordPull(size_t i, uint64_t rows, const std::string& error) {
  MutexLock lock(mu_);
  UpstreamStatus& st = status_[i];
  st.rows_pulled += rows;
  if (error.empty()) {
    st.ok = true;
    st.last_error.clear();
    st.failures = 0;
    st.last_success_ns = store_.now();
    next_attempt_ns_[i] = steadyNow() + static_cast<int64_t>(options_.interval_s * 1e9);
  } else {
    st.ok = false;
    st.last_error = error;
    ++st.failures;
    double backoff = std::min(options_.max_backoff_s,
                              options_.interval_s * std::pow(2.0, std::min(st.failures, 16) - 1));
    next_attempt_ns_[i] = steadyNow() + static_cast<int64_t>(backoff * 1e9);
  }
}

bool Syncer::isStopping() const {
  MutexLock lock(mu_);
  return stopping_;
}

std::vector<UpstreamStatus> Syncer::syncNow() {
  {
    MutexLock round(pull_mu_);
    for (size_t i = 0; i < upstreams_.size() && !isStopping(); ++i) pull(i);
  }
  return status();
}

std::vector<UpstreamStatus> Syncer::status() const {
  MutexLock lock(mu_);
  return status_;
}

void Syncer::setOnCommit(std::function<void()> hook) {
  MutexLock lock(hook_mu_);
  on_commit_ = std::move(hook);
}

double Syncer::dataAgeSeconds() const {
  MutexLock lock(mu_);
  if (status_.empty()) return 0;
  int64_t oldest = INT64_MAX;
  for (const auto& s : status_) oldest = std::min(oldest, s.last_success_ns);
  if (oldest == 0) return -1;
  return static_cast<double>(store_.now() - oldest) / 1e9;
}

}  // namespace perfhat::handler
