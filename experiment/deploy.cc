#include "experiment/deploy.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include "common/subprocess.h"
#include "experiment/background_process.h"
#include "experiment/event_log.h"
#include "experiment/measurements.h"

namespace perfhat::experiment {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The sample service as the study's build makes it (samples/CMakeLists.txt): the sources of
// these targets, all under kSampleDir, linked into kServiceBinary; the user directory and the
// workload generator are run from the build as they are.
constexpr const char* kSampleDir = "samples/agile";
constexpr const char* kSampleObjectDirs[] = {"/agile_core.dir/", "/agile-service.dir/"};
constexpr const char* kSampleLibrary = "libagile_core.a";
constexpr const char* kServiceBinary = "samples/agile-service";
constexpr const char* kUserdirBinary = "samples/agile-userdir";
constexpr const char* kWorkloadBinary = "samples/agile-workload";
constexpr auto kCompileTimeout = std::chrono::minutes(10);
constexpr auto kStartTimeout = std::chrono::seconds(60);

std::string cacheValue(const std::string& build_dir, const std::string& key) {
  std::ifstream in(fs::path(build_dir) / "CMakeCache.txt");
  if (!in) throw InputError(build_dir + ": not a CMake build folder (no CMakeCache.txt)");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    const size_t eq = line.find('=');
    if (eq != std::string::npos) return line.substr(eq + 1);
  }
  return "";
}

// A command line as CMake and Ninja write them: words split at blanks, "double quotes" kept
// together.
std::vector<std::string> splitCommand(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false, any = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (c == '\\' && i + 1 < s.size() && (s[i + 1] == '"' || s[i + 1] == '\\')) {
      cur += s[++i];
    } else if (!quoted && (c == ' ' || c == '\t' || c == '\n')) {
      if (any || !cur.empty()) out.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += c;
    }
  }
  if (any || !cur.empty()) out.push_back(cur);
  return out;
}

bool isSampleObject(const std::string& object) {
  return std::any_of(std::begin(kSampleObjectDirs), std::end(kSampleObjectDirs),
                     [&](const char* d) { return object.find(d) != std::string::npos; });
}

// The folder that must come first on the include path: the copy without "samples/agile".
fs::path includeRootOf(const fs::path& copy) {
  fs::path root = copy.lexically_normal();
  if (!root.has_filename()) root = root.parent_path();
  const fs::path sample_dir = kSampleDir;
  std::vector<fs::path> parts(sample_dir.begin(), sample_dir.end());
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (root.filename() != *it) {
      throw InputError(copy.string() + ": the copy must keep the sample's path (…/" + kSampleDir +
                       ", the study's sample_path) so that #include \"" + kSampleDir +
                       "/…\" finds the participant's headers");
    }
    root = root.parent_path();
  }
  return root;
}

fs::file_time_type newestHeader(const fs::path& copy) {
  fs::file_time_type newest{};
  for (const auto& e : fs::recursive_directory_iterator(copy)) {
    if (e.is_regular_file() && e.path().extension() != ".cc") {
      newest = std::max(newest, e.last_write_time());
    }
  }
  return newest;
}

bool upToDate(const CompileStep& s, fs::file_time_type headers) {
  std::error_code ec;
  const auto obj = fs::last_write_time(s.object, ec);
  if (ec) return false;
  const std::string cmd_file = s.object + ".cmd";
  std::ifstream in(cmd_file);
  std::string before((std::istreambuf_iterator<char>(in)), {});
  return before == json(s.command).dump() && obj > fs::last_write_time(s.source) && obj > headers;
}

std::string trimmed(std::string s, size_t max) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (s.size() > max) s = s.substr(0, max) + "\n…";
  return s;
}

bool sameContent(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (!fs::is_regular_file(a, ec) || !fs::is_regular_file(b, ec)) return false;
  if (fs::file_size(a, ec) != fs::file_size(b, ec)) return false;
  std::ifstream x(a, std::ios::binary), y(b, std::ios::binary);
  return std::equal(std::istreambuf_iterator<char>(x), {}, std::istreambuf_iterator<char>(y));
}

// Object → the files it was compiled from, as the build's Ninja dependency log records them
// (absolute paths).
std::map<std::string, std::vector<fs::path>> buildDependencies(const fs::path& build) {
  std::map<std::string, std::vector<fs::path>> deps;
  const std::string ninja = cacheValue(build.string(), "CMAKE_MAKE_PROGRAM");
  const SubprocessResult r = runSubprocess({ninja, "-C", build.string(), "-t", "deps"});
  if (!r.ok()) return deps;  // then every file is compiled
  std::string current;
  for (size_t at = 0; at < r.out.size();) {
    size_t nl = r.out.find('\n', at);
    if (nl == std::string::npos) nl = r.out.size();
    const std::string line = r.out.substr(at, nl - at);
    at = nl + 1;
    if (line.empty()) continue;
    if (line[0] != ' ') {
      const size_t colon = line.find(": #deps");
      current = colon == std::string::npos || line.find("(VALID)") == std::string::npos
                    ? ""
                    : line.substr(0, colon);
    } else if (!current.empty()) {
      const fs::path dep = line.substr(line.find_first_not_of(' '));
      deps[current].push_back((dep.is_absolute() ? dep : build / dep).lexically_normal());
    }
  }
  return deps;
}

// True when the build's own object of `s` is what compiling the copy would give: the build's
// object is newer than its inputs, and the copy's source and every sample file it includes are
// identical to the checkout's.
bool sameAsBuild(const CompileStep& s, const fs::path& build, const fs::path& sample,
                 const fs::path& copy, const std::map<std::string, std::vector<fs::path>>& deps) {
  const auto it = deps.find(s.original_object);
  if (it == deps.end()) return false;
  std::error_code ec;
  const auto obj_time = fs::last_write_time(build / s.original_object, ec);
  if (ec) return false;
  bool saw_source = false;
  for (const auto& dep : it->second) {
    if (fs::last_write_time(dep, ec) > obj_time || ec) return false;
    const fs::path rel = dep.lexically_relative(sample);
    if (rel.empty() || *rel.begin() == "..") continue;  // not part of the sample
    if (!sameContent(dep, copy / rel)) return false;
    saw_source = saw_source || dep == fs::path(s.original_source);
  }
  return saw_source;
}

void compileAll(const std::vector<CompileStep>& steps, const fs::path& build,
                const fs::path& sample, const fs::path& copy, int jobs, std::ostream& progress) {
  const auto headers = newestHeader(copy);
  const auto deps = buildDependencies(build);
  std::vector<const CompileStep*> todo;
  size_t reused = 0;
  for (const auto& s : steps) {
    if (sameAsBuild(s, build, sample, copy, deps)) {
      fs::copy_file(build / s.original_object, s.object, fs::copy_options::overwrite_existing);
      fs::remove(s.object + ".cmd");
      ++reused;
    } else if (!upToDate(s, headers)) {
      todo.push_back(&s);
    }
  }
  progress << "[deploy] " << steps.size() << " files in the sample: " << reused
           << " unchanged since the study's build, " << steps.size() - reused - todo.size()
           << " unchanged since the last deploy, " << todo.size() << " to compile" << std::endl;
  std::mutex mu;
  size_t next = 0, done = 0;
  std::vector<std::string> failures;
  auto worker = [&] {
    for (;;) {
      const CompileStep* s;
      {
        std::lock_guard lock(mu);
        if (next >= todo.size()) return;
        s = todo[next++];
      }
      fs::remove(s->object);
      SubprocessLimits limits;
      limits.timeout_ms = static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(kCompileTimeout).count());
      const SubprocessResult r = runSubprocess(s->command, s->directory, limits);
      std::lock_guard lock(mu);
      ++done;
      const std::string name = fs::path(s->source).filename().string();
      if (r.ok()) {
        std::ofstream(s->object + ".cmd") << json(s->command).dump();
        progress << "[deploy] " << done << "/" << todo.size() << " " << name << std::endl;
      } else {
        progress << "[deploy] " << done << "/" << todo.size() << " " << name << " FAILED"
                 << std::endl;
        failures.push_back(s->source + ":\n" +
                           trimmed(r.error.empty() ? r.err + r.out : r.error, 3000));
      }
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < std::max(1, jobs); ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  if (!failures.empty()) {
    std::string msg = "the build of the changed sample failed (" + std::to_string(failures.size()) +
                      " file" + (failures.size() == 1 ? "" : "s") +
                      " did not compile); nothing was deployed";
    for (const auto& f : failures) msg += "\n\n" + f;
    throw DeployBuildError(msg);
  }
}

// The task the deploy is for and the copy `run` prepared for it, from the session's log.
std::pair<std::string, std::string> taskCopy(const DeployOptions& o) {
  const std::string log = (fs::path(o.session_dir) / "events.jsonl").string();
  if (!fs::exists(log)) throw InputError(log + ": no session here (start it with `run`)");
  const std::vector<Event> events = loadEvents(log);
  std::string running, last_prepared;
  for (const auto& e : events) {
    if (e.type == "task_prepared") last_prepared = e.task;
    if (e.type == "task_started") running = e.task;
    if (e.type == "task_finished" && e.task == running) running.clear();
  }
  const std::string task = !o.task.empty() ? o.task : (!running.empty() ? running : last_prepared);
  if (task.empty()) throw InputError(log + ": no task prepared yet");
  std::string copy;
  for (const auto& e : events) {
    if (e.type == "task_prepared" && e.task == task) copy = e.detail.value("dir", "");
  }
  if (copy.empty()) {
    throw InputError(log + ": no copy of the sample for " + task +
                     " (was it prepared, and does the study name a `sample`?)");
  }
  return {task, copy};
}

}  // namespace

std::vector<CompileStep> sampleCompileSteps(const std::string& build_dir, const std::string& copy,
                                            const std::string& obj_dir) {
  const fs::path repo = cacheValue(build_dir, "CMAKE_HOME_DIRECTORY");
  const fs::path sample = repo / kSampleDir;
  const fs::path include_root = includeRootOf(fs::absolute(copy));
  const std::string launcher = cacheValue(build_dir, "CMAKE_CXX_COMPILER_LAUNCHER");
  const fs::path db = fs::path(build_dir) / "compile_commands.json";
  json entries;
  try {
    entries = json::parse(readBoundedFile(db.string()));
  } catch (const json::exception& e) {
    throw InputError(db.string() + ": " + e.what());
  }
  std::vector<CompileStep> steps;
  for (const auto& e : entries) {
    std::vector<std::string> args = e.contains("arguments")
                                        ? e["arguments"].get<std::vector<std::string>>()
                                        : splitCommand(e.value("command", ""));
    auto o = std::find(args.begin(), args.end(), "-o");
    if (o == args.end() || o + 1 == args.end() || !isSampleObject(*(o + 1))) continue;
    const fs::path file = fs::path(e.value("file", "")).lexically_normal();
    const fs::path rel = file.lexically_relative(sample);
    if (rel.empty() || *rel.begin() == "..") continue;
    CompileStep s;
    s.source = (fs::path(copy) / rel).lexically_normal().string();
    if (!fs::is_regular_file(s.source)) {
      throw InputError(s.source + ": missing from the copy (the sample's build compiles " +
                       file.string() + ")");
    }
    std::string flat = rel.string();
    std::replace(flat.begin(), flat.end(), '/', '_');
    s.object = (fs::path(obj_dir) / (flat + ".o")).string();
    s.original_object = *(o + 1);
    s.original_source = file.string();
    s.directory = e.value("directory", build_dir);
    std::vector<std::string> cmd;
    if (!launcher.empty()) cmd.push_back(launcher);
    cmd.push_back(args[0]);
    cmd.push_back("-I" + include_root.string());
    for (size_t i = 1; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (a == "-MD" || a == "-MMD") continue;
      if ((a == "-MT" || a == "-MF" || a == "-MQ") && i + 1 < args.size()) {
        ++i;
        continue;
      }
      if (a == "-o" && i + 1 < args.size()) {
        cmd.push_back("-o");
        cmd.push_back(s.object);
        ++i;
        continue;
      }
      if (fs::path(a).lexically_normal() == file) {
        cmd.push_back(s.source);
        continue;
      }
      cmd.push_back(a);
    }
    s.command = std::move(cmd);
    steps.push_back(std::move(s));
  }
  if (steps.empty()) {
    throw InputError(db.string() +
                     ": no sources of the sample service (is the sample part of "
                     "this build?)");
  }
  return steps;
}

std::vector<std::string> sampleLinkCommand(const std::string& build_dir,
                                           const std::vector<CompileStep>& steps,
                                           const std::string& output) {
  const std::string ninja = cacheValue(build_dir, "CMAKE_MAKE_PROGRAM");
  if (ninja.find("ninja") == std::string::npos) {
    throw InputError(build_dir + ": deploy needs a Ninja build (cmake -G Ninja)");
  }
  const SubprocessResult r =
      runSubprocess({ninja, "-C", build_dir, "-t", "commands", kServiceBinary});
  if (!r.ok()) throw std::runtime_error("ninja -t commands failed: " + trimmed(r.err, 2000));
  std::string last;
  for (size_t at = 0; at < r.out.size();) {
    const size_t nl = r.out.find('\n', at);
    const std::string line = r.out.substr(at, nl == std::string::npos ? nl : nl - at);
    if (!line.empty()) last = line;
    at = nl == std::string::npos ? r.out.size() : nl + 1;
  }
  std::vector<std::string> words = splitCommand(last);
  // CMake wraps link rules in ": && … && :" (and pre/post steps); keep the command itself.
  auto begin = words.begin(), end = words.end();
  if (begin != end && *begin == ":" && begin + 1 != end && *(begin + 1) == "&&") begin += 2;
  const auto amp = std::find(begin, end, "&&");
  end = amp;
  std::vector<std::string> cmd;
  size_t replaced = 0;
  for (auto it = begin; it != end; ++it) {
    if (*it == "-o" && it + 1 != end) {
      cmd.push_back("-o");
      cmd.push_back(output);
      ++it;
      continue;
    }
    if (it->size() >= std::string(kSampleLibrary).size() &&
        it->compare(it->size() - std::string(kSampleLibrary).size(), std::string::npos,
                    kSampleLibrary) == 0) {
      for (const auto& s : steps) {
        if (s.original_object.find("/agile_core.dir/") != std::string::npos) {
          cmd.push_back(s.object);
          ++replaced;
        }
      }
      continue;
    }
    auto step = std::find_if(steps.begin(), steps.end(),
                             [&](const CompileStep& s) { return s.original_object == *it; });
    if (step != steps.end()) {
      cmd.push_back(step->object);
      ++replaced;
      continue;
    }
    cmd.push_back(*it);
  }
  if (replaced != steps.size()) {
    throw std::runtime_error("the build's link line of " + std::string(kServiceBinary) +
                             " does not name the sample's objects as expected: " + last);
  }
  return cmd;
}

json deploySample(const DeployOptions& o, std::ostream& progress) {
  const fs::path copy = fs::absolute(o.copy).lexically_normal();
  const fs::path task_dir = includeRootOf(copy);
  const fs::path work = task_dir / ".deploy";
  const fs::path build = fs::absolute(o.build_dir);
  fs::create_directories(work / "obj");
  const auto steps = sampleCompileSteps(build.string(), copy.string(), (work / "obj").string());
  compileAll(steps, build,
             fs::path(cacheValue(build.string(), "CMAKE_HOME_DIRECTORY")) / kSampleDir, copy,
             o.jobs, progress);
  const std::string binary = (work / "agile-service").string();
  progress << "[deploy] linking " << binary << std::endl;
  const SubprocessResult link =
      runSubprocess(sampleLinkCommand(build.string(), steps, binary), build.string());
  if (!link.ok()) {
    throw DeployBuildError("linking the changed sample failed; nothing was deployed\n" +
                           trimmed(link.error.empty() ? link.err + link.out : link.error, 3000));
  }

  BackgroundProcess userdir({(build / kUserdirBinary).string(), "--listen", "127.0.0.1:0"}, {},
                            (work / "userdir.log").string());
  const auto userdir_addr = userdir.waitListening(kStartTimeout);
  if (!userdir_addr) throw std::runtime_error("the user directory did not start");
  const fs::path db = work / "agile.sqlite";
  fs::remove(db);
  const std::string version = o.version.empty() ? "deploy-" + o.task : o.version;
  std::vector<std::pair<std::string, std::string>> env{{"PERFHAT_SAMPLER", "full"},
                                                       {"PERFHAT_EXPORT_INTERVAL_S", "2"},
                                                       {"OTEL_SERVICE_NAME", "agile-service"},
                                                       {"OTEL_SERVICE_VERSION", version},
                                                       {"PERFHAT_ENDPOINT", o.handler},
                                                       {"OTEL_EXPORTER_OTLP_ENDPOINT", o.handler},
                                                       {"PERFHAT_TOKEN", o.token}};
  progress << "[deploy] starting the changed service (version " << version << ", "
           << (o.handler.empty() ? "exporting nowhere" : "exporting to " + o.handler) << ")"
           << std::endl;
  BackgroundProcess service({binary, "--listen", "127.0.0.1:0", "--db", db.string(), "--userdir",
                             "http://" + *userdir_addr},
                            env, (work / "service.log").string());
  const auto addr = service.waitListening(kStartTimeout);
  if (!addr) {
    std::ifstream in(work / "service.log");
    throw std::runtime_error("the changed service did not start:\n" +
                             trimmed(std::string(std::istreambuf_iterator<char>(in), {}), 3000));
  }
  progress << "[deploy] service at http://" << *addr << "; running the performance test (" << o.rate
           << " req/s for at most " << o.duration_s << " s)" << std::endl;
  const fs::path report = work / "workload.json";
  fs::remove(report);
  std::vector<std::string> wl{(build / kWorkloadBinary).string(),
                              "--target",
                              "http://" + *addr,
                              "--shape",
                              "stationary",
                              "--rate",
                              std::to_string(o.rate),
                              "--duration",
                              std::to_string(o.duration_s),
                              "--workers",
                              std::to_string(o.workers),
                              "--report",
                              report.string()};
  if (o.requests > 0) {
    wl.push_back("--requests");
    wl.push_back(std::to_string(o.requests));
  }
  BackgroundProcess workload(wl, {}, "");  // its progress lines go to our stderr
  const auto rc = workload.wait(std::chrono::seconds(o.duration_s + 120));
  if (!rc) {
    workload.stop();
    throw std::runtime_error("the workload did not finish in time");
  }
  service.stop();  // SIGTERM: the service flushes its last spans to the handler
  userdir.stop();
  if (*rc != 0 || !fs::exists(report)) {
    throw std::runtime_error("the workload failed (exit " + std::to_string(*rc) +
                             "); service log: " + (work / "service.log").string());
  }
  return json::parse(readBoundedFile(report.string()));
}

int runDeploy(const DeployOptions& in, std::ostream& out) {
  DeployOptions o = in;
  if (o.rate <= 0 || o.duration_s < 1 || o.workers < 1 || o.requests < 0) {
    throw InputError("--rate, --duration and --workers must be positive");
  }
  if (o.copy.empty()) {
    if (o.session_dir.empty()) throw InputError("give --session (or --copy)");
    std::tie(o.task, o.copy) = taskCopy(o);
  }
  if (o.task.empty()) o.task = "sample";
  // Each deploy goes into the session's log too (raw data of the study: when and how often a
  // participant tested a change). It counts for no measure.
  const std::string log =
      o.session_dir.empty() ? "" : (fs::path(o.session_dir) / "events.jsonl").string();
  auto record = [&](json detail) {
    if (!log.empty() && fs::exists(log)) {
      appendEvent(log, Event{nowMs(), "deployed", o.task, "deploy", std::move(detail)});
    }
  };
  json report;
  try {
    report = deploySample(o, std::cerr);
  } catch (const DeployBuildError&) {
    record({{"ok", false}, {"reason", "build failed"}});
    throw;
  }
  record({{"ok", report.value("ok", 0) > 0},
          {"requests", report.value("sent", 0)},
          {"errors", report.value("errors", 0)}});
  const fs::path saved = includeRootOf(fs::absolute(o.copy)) / ".deploy" / "response-times.json";
  std::ofstream(saved) << report.dump(2) << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%llu requests, %llu errors in %.1f s (%.1f req/s)",
                report.value("sent", 0ULL), report.value("errors", 0ULL),
                report.value("elapsed_s", 0.0), report.value("throughput_per_s", 0.0));
  out << "Response times of the deployed " << o.task << " copy (" << line << "):\n\n"
      << "| endpoint | requests | errors | mean ms | p50 ms | p99 ms |\n"
      << "|---|---:|---:|---:|---:|---:|\n";
  const json routes = report.value("routes", json::object());
  for (const auto& [route, s] : routes.items()) {
    std::snprintf(line, sizeof line, "| %s | %llu | %llu | %.2f | %.2f | %.2f |\n", route.c_str(),
                  s.value("count", 0ULL), s.value("errors", 0ULL), s.value("mean_ms", 0.0),
                  s.value("p50_ms", 0.0), s.value("p99_ms", 0.0));
    out << line;
  }
  out << "\n(" << saved.string() << ")\n";
  return report.value("ok", 0) > 0 ? 0 : 1;
}

}  // namespace perfhat::experiment
