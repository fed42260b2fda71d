#include "plan/calibrate.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace perfhat::plan {

Calibration bisectBound(std::size_t units, double target,
                        const std::function<double(std::size_t)>& measure) {
  Calibration c;
  auto at = [&](std::size_t h) {
    const double o = measure(h);
    c.steps.push_back({h, o});
    return o <= target;
  };
  if (units == 0) return c;
  if (at(units)) {
    c.h_bound = units;
    return c;
  }
  std::size_t lo = 0, hi = units;  // overhead(lo) within the target (h = 0 by definition)
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (at(mid)) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  c.h_bound = lo;
  return c;
}

double cpuSecondsOf(const std::vector<std::string>& argv,
                    const std::vector<std::pair<std::string, std::string>>& env, double timeout_s) {
  if (argv.empty()) throw std::runtime_error("no benchmark command");
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    bool replaced = false;
    for (const auto& [k, v] : env) replaced |= kv.rfind(k + "=", 0) == 0;
    if (!replaced) envs.push_back(std::move(kv));
  }
  for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
  std::vector<char*> a, e;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  for (auto& s : envs) e.push_back(s.data());
  e.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot fork");
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      ::dup2(null, 0);
      ::dup2(null, 1);  // the benchmark's output is not ours to print
    }
    ::execvpe(a[0], a.data(), e.data());
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  int status = 0;
  struct rusage ru {};
  for (;;) {
    const pid_t r = ::wait4(pid, &status, WNOHANG, &ru);
    if (r == pid) break;
    if (r < 0) throw std::runtime_error("lost the benchmark process");
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::wait4(pid, &status, 0, &ru);
      throw std::runtime_error("the benchmark ran longer than --timeout");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(
        WIFEXITED(status) && WEXITSTATUS(status) == 127
            ? "cannot run " + argv[0]
            : "the benchmark failed (exit status " +
                  std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) +
                  ")");
  }
  auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return secs(ru.ru_utime) + secs(ru.ru_stime);
}

std::string singleVariantManifest(const std::vector<std::string>& units) {
  nlohmann::ordered_json m;
  m["release"] = "calibrate";
  m["strategy"] = "r";
  m["h_bound"] = units.size();
  m["variants"] = nlohmann::json::array({{{"id", 0}, {"units", units}}});
  m["assignment"] = {0};
  return m.dump();
}

}  // namespace perfhat::plan
