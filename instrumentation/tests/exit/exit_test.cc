// The instrumented program of burst_app.cc as a real process against a real perfhat-handler
// (loopback HTTP, SQLite): bursts faster than the export, and exits that never call
// perfhat::shutdown() (issues #18, #19). The handler's counts are compared with the program's.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "tests/integration/handler_process.h"

namespace {

using perfhat::testing::HandlerProcess;
using perfhat::testing::TempDir;

struct AppRun {
  int status = -1;  // exit code, or -signal
  std::string out, err;
  long hot = -1, outer = -1;  // the program's own counts
};

// Runs `app args...` with `env` added to the environment; captures stdout and stderr.
// POST /v1/feedback:batchGet to the handler at `url`; fails the test unless it answers 200.
void batchGet(const std::string& url, const std::vector<std::string>& keys, nlohmann::json& out) {
  httplib::Client c(url);
  auto res =
      c.Post("/v1/feedback:batchGet", nlohmann::json{{"keys", keys}}.dump(), "application/json");
  ASSERT_TRUE(res && res->status == 200);
  out = nlohmann::json::parse(res->body);
}

AppRun run_app(const std::string& app, const std::vector<std::string>& env,
               std::vector<std::string> args) {
  int out[2], err[2];
  if (pipe(out) != 0 || pipe(err) != 0) return {};
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    close(out[0]);
    close(err[0]);
    for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
    args.insert(args.begin(), app);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  AppRun r;
  char buf[4096];
  for (int fd : {out[0], err[0]}) {
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) (fd == out[0] ? r.out : r.err).append(buf, n);
    close(fd);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
  std::smatch m;
  if (std::regex_search(r.out, m, std::regex(R"(calls hot=(\d+) outer=(\d+))"))) {
    r.hot = std::stol(m[1]);
    r.outer = std::stol(m[2]);
  }
  return r;
}

class InstrExit : public ::testing::Test {
 protected:
  InstrExit()
      : dir_("exit"),
        handler_({"--mode", "deployed", "--store", dir_ / "s.sqlite", "--allow-unauthenticated"}) {}

  std::vector<std::string> env(const std::string& sampler, const std::string& mode) const {
    return {"PERFHAT_ENDPOINT=" + handler_.url(),
            "PERFHAT_SAMPLER=" + sampler,
            "PERFHAT_EXPORT=" + mode,
            "OTEL_SERVICE_NAME=burst",
            "PERFHAT_EXPORT_INTERVAL_S=0.2",
            "PERFHAT_SCOPE="};
  }
  // The handler's call count of a function (0 if it has none).
  double count(const std::string& key) {
    httplib::Client c(handler_.url());
    nlohmann::json q = {{"keys", {key}}};
    auto res = c.Post("/v1/feedback:batchGet", q.dump(), "application/json");
    if (!res || res->status != 200) return -1;
    auto j = nlohmann::json::parse(res->body);
    for (const auto& it : j["items"]) {
      if (it["key"] == key) return it["stats"]["count"].get<double>();
    }
    return 0;
  }
  // HTTP statuses the handler answered, from its own metrics.
  std::string statuses() {
    httplib::Client c(handler_.url());
    auto res = c.Get("/metrics");
    std::string out;
    std::regex re(R"re(perfhat_handler_requests_total\{status="(\d+)"\} [1-9])re");
    for (std::sregex_iterator i(res->body.begin(), res->body.end(), re), e; i != e; ++i) {
      out += (*i)[1].str() + " ";
    }
    return out;
  }

  TempDir dir_;
  HandlerProcess handler_;
};

const std::string kApp = PERFHAT_BURST_APP;
const std::string kAutoApp = PERFHAT_BURST_APP_AUTO;

// 22,000 probed calls in a burst, then exit without shutdown: the full sampler's counts are
// exact (before: 4,096 spans, the rest silently dropped; the handler saw ~3,700 of 20,000).
TEST_F(InstrExit, BurstUnderFullSamplerIsExact) {
  for (const char* mode : {"spans", "aggregates"}) {
    SCOPED_TRACE(mode);
    TempDir d(mode);
    HandlerProcess h({"--mode", "deployed", "--store", d / "s.sqlite", "--allow-unauthenticated"});
    auto e = env("full", mode);
    e[0] = "PERFHAT_ENDPOINT=" + h.url();
    AppRun r = run_app(kApp, e, {"2000"});
    ASSERT_EQ(r.status, 0) << r.err;
    ASSERT_EQ(r.hot, 20000);
    nlohmann::json j;
    ASSERT_NO_FATAL_FAILURE(batchGet(h.url(), {"burst::hot(int)", "burst::outer(int)"}, j));
    ASSERT_EQ(j["items"].size(), 2u) << j.dump();
    for (const auto& it : j["items"]) {
      EXPECT_EQ(it["stats"]["count"].get<double>(), it["key"] == "burst::hot(int)" ? 20000 : 2000)
          << it["key"];
    }
  }
}

// Under sampling the weighted counts estimate the true ones: within 6 standard deviations of a
// Bernoulli(0.5) count (141 calls for 20,000), not half or a third of them.
TEST_F(InstrExit, BurstUnderSamplingIsUnbiased) {
  for (const char* sampler : {"uniform", "adaptive"}) {
    SCOPED_TRACE(sampler);
    TempDir d(sampler);
    HandlerProcess h({"--mode", "deployed", "--store", d / "s.sqlite", "--allow-unauthenticated"});
    auto e = env(sampler, "spans");
    e[0] = "PERFHAT_ENDPOINT=" + h.url();
    AppRun r = run_app(kApp, e, {"2000"});
    ASSERT_EQ(r.status, 0) << r.err;
    nlohmann::json j;
    ASSERT_NO_FATAL_FAILURE(batchGet(h.url(), {"burst::hot(int)"}, j));
    ASSERT_EQ(j["items"].size(), 1u) << j.dump();
    EXPECT_NEAR(j["items"][0]["stats"]["count"].get<double>(), 20000, 6 * 141.5);
  }
}

// Issue #18: a -finstrument-functions program (every function probed, the standard library's
// inline functions included) that exported during its run and exits without
// perfhat::shutdown(): it exits 0 and the exit-time flush delivers the calls made after the
// last export. Spans and aggregates.
TEST_F(InstrExit, AutoInstrumentedProgramExitsCleanlyWithoutShutdown) {
  for (const char* mode : {"spans", "aggregates"}) {
    SCOPED_TRACE(mode);
    TempDir d(mode);
    HandlerProcess h({"--mode", "deployed", "--store", d / "s.sqlite", "--allow-unauthenticated"});
    auto e = env("full", mode);
    e[0] = "PERFHAT_ENDPOINT=" + h.url();
    AppRun r = run_app(kAutoApp, e, {"200", "--sleep-ms", "700"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
    ASSERT_EQ(r.hot, 4000);
    nlohmann::json j;
    ASSERT_NO_FATAL_FAILURE(batchGet(h.url(), {"burst::hot(int)"}, j));
    ASSERT_EQ(j["items"].size(), 1u) << j.dump();
    EXPECT_EQ(j["items"][0]["stats"]["count"].get<double>(), 4000);
  }
}

// exit() from another thread than main: that thread's calls are flushed too.
// A forked child (a test framework's death test, a pre-forking server) inherits the library's
// state but not its background thread, and possibly locks that thread held: it must exit
// without waiting for either, and the parent's data must still arrive.
TEST_F(InstrExit, ForkedChildExitsWithoutHangingAndTheParentStillExports) {
  for (const std::string& app : {kApp, kAutoApp}) {
    for (const char* mode : {"spans", "aggregates"}) {
      SCOPED_TRACE(app + " " + mode);
      TempDir d("fork");
      HandlerProcess h(
          {"--mode", "deployed", "--store", d / "s.sqlite", "--allow-unauthenticated"});
      auto e = env("full", mode);
      e[0] = "PERFHAT_ENDPOINT=" + h.url();
      AppRun r = run_app(app, e, {"200", "--sleep-ms", "300", "--fork-child"});
      ASSERT_EQ(r.status, 0) << r.err;
      ASSERT_EQ(r.hot, 4000);
      nlohmann::json j;
      ASSERT_NO_FATAL_FAILURE(batchGet(h.url(), {"burst::hot(int)"}, j));
      ASSERT_EQ(j["items"].size(), 1u) << j.dump();
      // The parent's calls, exactly: the child records nothing.
      EXPECT_EQ(j["items"][0]["stats"]["count"].get<double>(), 4000) << j.dump();
    }
  }
}

TEST_F(InstrExit, ExitFromAThread) {
  for (const std::string& app : {kApp, kAutoApp}) {
    SCOPED_TRACE(app);
    TempDir d("thread");
    HandlerProcess h({"--mode", "deployed", "--store", d / "s.sqlite", "--allow-unauthenticated"});
    auto e = env("full", "spans");
    e[0] = "PERFHAT_ENDPOINT=" + h.url();
    AppRun r = run_app(app, e, {"100", "--sleep-ms", "500", "--exit-from-thread"});
    ASSERT_EQ(r.status, 0) << r.err;
    ASSERT_EQ(r.outer, 200);
    nlohmann::json j;
    ASSERT_NO_FATAL_FAILURE(batchGet(h.url(), {"burst::outer(int)"}, j));
    ASSERT_EQ(j["items"].size(), 1u) << j.dump();
    EXPECT_EQ(j["items"][0]["stats"]["count"].get<double>(), 201);  // + the thread's one call
  }
}

// Probed calls in static destructors, before and after the library's exit handler: harmless
// (exit 0). Those that run before the flush are counted; none is counted twice.
TEST_F(InstrExit, ProbesInStaticDestructors) {
  for (const std::string& app : {kApp, kAutoApp}) {
    for (const char* mode : {"spans", "aggregates"}) {
      SCOPED_TRACE(app + " " + mode);
      AppRun r = run_app(app, env("full", mode), {"100", "--static-dtor-probes"});
      ASSERT_EQ(r.status, 0) << r.err;
      ASSERT_EQ(r.outer, 100);
    }
  }
  const double outer = count("burst::outer(int)");
  EXPECT_GE(outer, 4 * 100);
  EXPECT_LE(outer, 4 * (100 + 2 * 100));  // two statics make 100 calls each at exit
}

// Only endpoints the handler serves are used (DESIGN §5): it answered no 404.
TEST_F(InstrExit, OnlyEndpointsTheHandlerServes) {
  AppRun r = run_app(kApp, env("full", "spans"), {"100", "--sleep-ms", "500"});
  ASSERT_EQ(r.status, 0) << r.err;
  AppRun a = run_app(kApp, env("full", "aggregates"), {"100", "--sleep-ms", "500"});
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(count("burst::outer(int)"), 400);
  EXPECT_EQ(statuses(), "200 ");
}

}  // namespace

// Issue #18: the OTLP transport (cpp-httplib with OpenSSL and Brotli, zlib) is a module that
// perfhat::otlp loads at its first request. A program recording with no endpoint maps none of
// it, even after an export pass (--print-maps flushes first); with an endpoint the module and
// cpp-httplib are mapped (so the check does see them) and every call arrives.
TEST_F(InstrExit, HttpLibrariesAreMappedOnlyWithAnEndpoint) {
  for (const std::string& app : {kApp, kAutoApp}) {
    SCOPED_TRACE(app);
    auto e = env("full", "spans");
    e[0] = "PERFHAT_ENDPOINT=";
    e.push_back("OTEL_EXPORTER_OTLP_ENDPOINT=");
    AppRun off = run_app(app, e, {"100", "--print-maps"});
    ASSERT_EQ(off.status, 0) << off.err;
    ASSERT_EQ(off.outer, 100);
    EXPECT_EQ(off.out.find("mapped "), std::string::npos) << off.out;
    EXPECT_EQ(off.err, "");

    AppRun on = run_app(app, env("full", "spans"), {"100", "--print-maps"});
    ASSERT_EQ(on.status, 0) << on.err;
    EXPECT_NE(on.out.find("mapped libperfhat_otlp_http.so"), std::string::npos) << on.out;
    EXPECT_NE(on.out.find("mapped libcpp-httplib"), std::string::npos) << on.out;
  }
  EXPECT_EQ(count("burst::outer(int)"), 2 * 100);
}

// The transport is loaded when probes are turned on (by the first probed call here), on that
// thread, not at the first export: a first export during exit loaded OpenSSL while the exit
// handlers ran, and crashed now and then. The export interval is a minute, so nothing but the
// exit flush exports. With probes off, an endpoint alone loads nothing, even after a flush.
TEST_F(InstrExit, TheTransportIsLoadedWhenProbesTurnOnNotAtTheFirstExport) {
  for (const std::string& app : {kApp, kAutoApp}) {
    SCOPED_TRACE(app);
    auto slow = env("full", "spans");
    std::replace(slow.begin(), slow.end(), std::string("PERFHAT_EXPORT_INTERVAL_S=0.2"),
                 std::string("PERFHAT_EXPORT_INTERVAL_S=60"));
    AppRun on = run_app(app, slow, {"10", "--print-maps-at-start"});
    ASSERT_EQ(on.status, 0) << on.err;
    EXPECT_NE(on.out.find("at start mapped libperfhat_otlp_http.so"), std::string::npos) << on.out;

    auto e = env("full", "spans");
    e.push_back("PERFHAT_ENABLED=0");
    AppRun off = run_app(app, e, {"10", "--print-maps-at-start", "--print-maps"});
    ASSERT_EQ(off.status, 0) << off.err;
    EXPECT_EQ(off.out.find("mapped "), std::string::npos) << off.out;
  }
}

// The transport module is found wherever the program is: a copy in a directory with no module
// beside it still exports, through the module directory the build (an installed package: the
// package) compiled into it. Not through a RUNPATH, which would make every start search that
// directory first for every library the program needs.
TEST_F(InstrExit, TheTransportIsFoundWhereverTheProgramIsWithoutARunpath) {
  const std::string moved = dir_ / "moved_burst_app";
  std::filesystem::copy_file(kApp, moved);
  AppRun r = run_app(moved, env("full", "spans"), {"100", "--print-maps", "--print-runpath"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("mapped libperfhat_otlp_http.so"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("runpath"), std::string::npos) << r.out;
  EXPECT_EQ(count("burst::outer(int)"), 100);
}

// A transport module that is missing, or a file that is not one: one line on stderr naming the
// file, the program runs to a normal exit, and the spans it could not send are counted as
// dropped (nothing reaches the handler).
TEST_F(InstrExit, UnloadableTransportModuleIsOneLineAndCountedDrops) {
  for (const std::string& module : {dir_ / "no-such-module.so", std::string("libz.so.1")}) {
    SCOPED_TRACE(module);
    auto e = env("full", "spans");
    e.push_back("PERFHAT_OTLP_MODULE=" + module);
    AppRun r = run_app(kApp, e, {"100", "--shutdown", "--print-counters"});
    ASSERT_EQ(r.status, 0) << r.err;
    ASSERT_EQ(r.outer, 100);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("perfhat: OTLP/HTTP module not loaded (", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(module), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("recorded=1100 exported=0 dropped_export=1100"), std::string::npos)
        << r.out;
  }
  EXPECT_EQ(count("burst::outer(int)"), 0);
}
