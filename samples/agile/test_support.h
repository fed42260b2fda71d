// Test helpers for the sample: a private temp dir and an in-process service on a free
// loopback port (real SQLite, real HTTP), torn down at scope exit.
#pragma once

#include <httplib.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "samples/agile/api.h"
#include "samples/agile/database.h"
#include "samples/agile/seed.h"
#include "samples/agile/user_directory.h"

namespace agile::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "agile-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data()) ? pattern : "";
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The service stack on 127.0.0.1:<free port>, with no simulated latency unless asked.
class ServiceFixture {
 public:
  explicit ServiceFixture(std::chrono::microseconds round_trip = std::chrono::microseconds(0),
                          std::string userdir_url = "")
      : db_({dir_.path() + "/agile.sqlite", round_trip, 4}),
        repository_(db_),
        directory_({std::move(userdir_url)}),
        api_(repository_, directory_) {
    createSchema(db_);
    summary_ = seedDataset(db_);
    api_.registerRoutes(server_);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // Bounded wait for the accept loop (cpp-httplib 0.11 has no wait_until_ready).
    for (int i = 0; i < 500 && !server_.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  ~ServiceFixture() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  Database& db() { return db_; }
  const Repository& repository() const { return repository_; }
  const SeedSummary& summary() const { return summary_; }

 private:
  TempDir dir_;
  Database db_;
  Repository repository_;
  UserDirectoryClient directory_;
  Api api_;
  SeedSummary summary_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace agile::testing
