#include "tests/support/postgres_server.h"

#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace perfhat::testing {
namespace fs = std::filesystem;
namespace {

constexpr const char* kUser = "perfhat";

bool hasServerBinaries(const fs::path& dir) {
  return fs::exists(dir / "initdb") && fs::exists(dir / "postgres");
}

// A port nobody listens on right now (the server binds it a moment later; a clash is retried).
int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("cannot find a free loopback port");
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Forks `argv` as uid/gid (when we are root), stdout+stderr appended to `log`, cwd `dir`.
pid_t spawn(const std::vector<std::string>& argv, uid_t uid, gid_t gid, const fs::path& dir,
            const fs::path& log) {
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid > 0) return pid;
  if (::geteuid() == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) _exit(126);
  }
  // A test killed by a timeout takes its server along (set after setuid, which clears it).
  ::prctl(PR_SET_PDEATHSIG, SIGQUIT);
  int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd >= 0) {
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::close(fd);
  }
  if (::chdir(dir.c_str()) != 0) _exit(126);
  ::setenv("LC_ALL", "C", 1);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execv(args[0], args.data());
  _exit(127);
}

}  // namespace

std::optional<fs::path> findPostgresBinDir() {
  if (const char* env = std::getenv("PERFHAT_POSTGRES_BIN"); env && *env) {
    if (hasServerBinaries(env)) return fs::path(env);
  }
  std::vector<fs::path> versions;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    if (hasServerBinaries(e.path() / "bin")) versions.push_back(e.path() / "bin");
  }
  if (!versions.empty()) {
    // Newest major version: compare numerically ("15" > "9.6").
    return *std::max_element(versions.begin(), versions.end(), [](const auto& a, const auto& b) {
      return std::atof(a.parent_path().filename().c_str()) <
             std::atof(b.parent_path().filename().c_str());
    });
  }
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string d; std::getline(ss, d, ':');) {
      if (!d.empty() && hasServerBinaries(d)) return fs::path(d);
    }
  }
  return std::nullopt;
}

std::optional<std::string> postgresSkipReason() {
  if (findPostgresBinDir()) return std::nullopt;
  const char* skip = std::getenv("PERFHAT_SKIP_POSTGRES");
  if (skip && std::string(skip) == "1") {
    return "PostgreSQL server binaries (initdb, postgres) not found and PERFHAT_SKIP_POSTGRES=1: "
           "PostgreSQL backend tests skipped (scripts/install-deps.sh installs postgresql)";
  }
  return std::nullopt;
}

PostgresServer::PostgresServer() {
  auto bin = findPostgresBinDir();
  if (!bin) {
    throw std::runtime_error(
        "PostgreSQL server binaries (initdb, postgres) not found in $PERFHAT_POSTGRES_BIN, "
        "/usr/lib/postgresql/*/bin or PATH: run scripts/install-deps.sh (package postgresql), "
        "or set PERFHAT_SKIP_POSTGRES=1 to skip these tests");
  }
  bin_ = *bin;
  char tmpl[] = "/tmp/perfhat-pg-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  uid_ = ::getuid();
  gid_ = ::getgid();
  if (::geteuid() == 0) {
    // PostgreSQL refuses to run as root: hand the directory to an unprivileged user.
    const passwd* pw = ::getpwnam("postgres");
    if (!pw) pw = ::getpwnam("nobody");
    if (!pw)
      throw std::runtime_error("running as root and neither user postgres nor nobody exists");
    uid_ = pw->pw_uid;
    gid_ = pw->pw_gid;
    if (::chown(dir_.c_str(), uid_, gid_) != 0) throw std::runtime_error("chown " + dir_.string());
  }
  try {
    initData();
    launch();
  } catch (...) {
    fs::remove_all(dir_);
    throw;
  }
}

// initdb costs seconds of CPU; ctest runs each test case in its own process, each with its own
// server. So the first run keeps a pristine initdb result per user and server version under /tmp
// (made complete before it is renamed into place) and later servers start from a copy.
void PostgresServer::initData() {
  const fs::path data = dir_ / "data";
  const fs::path log = dir_ / "initdb.log";
  const fs::path tmpl = fs::path("/tmp") / ("perfhat-pg-template-" + std::to_string(uid_) + "-" +
                                            bin_.parent_path().filename().string());
  auto run = [&](const std::vector<std::string>& argv, const std::string& what) {
    int status = 0;
    ::waitpid(spawn(argv, uid_, gid_, dir_, log), &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      throw std::runtime_error(what + " failed: " + readFile(log));
    }
  };
  if (fs::exists(tmpl / "PG_VERSION")) {
    run({"/bin/cp", "-a", tmpl.string(), data.string()}, "copying " + tmpl.string());
    return;
  }
  run({(bin_ / "initdb").string(), "-D", data.string(), "-U", kUser, "--auth=trust",
       "--encoding=UTF8", "--locale=C", "--no-sync"},
      "initdb");
  const fs::path staging = dir_ / "template";
  run({"/bin/cp", "-a", data.string(), staging.string()}, "copying the initdb result");
  std::error_code ec;
  fs::rename(staging, tmpl, ec);  // another process may have won the race: theirs is as good
}

PostgresServer::~PostgresServer() {
  if (pid_ > 0) {
    // Immediate shutdown: no checkpoint for data that is deleted next.
    ::kill(pid_, SIGQUIT);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

void PostgresServer::launch() {
  const fs::path log = dir_ / "server.log";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (int attempt = 0; attempt < 5; ++attempt) {
    const size_t log_start = fs::exists(log) ? fs::file_size(log) : 0;
    if (port_ == 0 || attempt > 0) port_ = freePort();
    // fsync off: a test server's data need not survive a power cut.
    pid_ = spawn({(bin_ / "postgres").string(), "-D", (dir_ / "data").string(), "-p",
                  std::to_string(port_), "-k", dir_.string(), "-c", "listen_addresses=127.0.0.1",
                  "-c", "fsync=off", "-c", "max_connections=40", "-c", "shared_buffers=16MB"},
                 uid_, gid_, dir_, log);
    const std::string probe = url();
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        break;  // exited: see the log below
      }
      if (PQping(probe.c_str()) == PQPING_OK) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::string out = readFile(log).substr(log_start);
    if (pid_ > 0) {
      stop();
      throw std::runtime_error("PostgreSQL did not accept connections within 60 s; log: " + out);
    }
    if (out.find("could not bind") == std::string::npos &&
        out.find("already in use") == std::string::npos) {
      throw std::runtime_error("PostgreSQL exited at start; log: " + out);
    }
  }
  throw std::runtime_error("PostgreSQL found no free port after 5 attempts");
}

void PostgresServer::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGINT);  // fast shutdown: roll back sessions, checkpoint, exit
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int status = 0;
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGQUIT);  // immediate shutdown
      ::waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  pid_ = -1;
}

void PostgresServer::start() {
  if (pid_ <= 0) launch();
}

std::string PostgresServer::url(const std::string& database) const {
  return "postgresql://" + std::string(kUser) + "@127.0.0.1:" + std::to_string(port_) + "/" +
         database;
}

std::string PostgresServer::createDatabase(const std::string& name) const {
  if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
      })) {
    throw std::invalid_argument("database name must be letters, digits and underscores: " + name);
  }
  PGconn* c = PQconnectdb(url().c_str());
  std::string err;
  if (PQstatus(c) != CONNECTION_OK) {
    err = PQerrorMessage(c);
  } else {
    PGresult* r = PQexec(c, ("CREATE DATABASE \"" + name + "\"").c_str());
    if (PQresultStatus(r) != PGRES_COMMAND_OK) err = PQresultErrorMessage(r);
    PQclear(r);
  }
  PQfinish(c);
  if (!err.empty()) throw std::runtime_error("CREATE DATABASE " + name + ": " + err);
  return url(name);
}

}  // namespace perfhat::testing
