// Benchmark of compile-flag lookup on a generated compile_commands.json of N entries (the size of
// a mid-sized to large project's database; ~330 bytes per entry, like CMake's).
//
//   BM_CompileCommandFor/N   compileCommandFor(file) for the database's files in turn, the call
//                            the server makes at every analysis and perfhat-fetch for every file.
//                            Counters, measured in the same run: `reread_us`, the same lookup
//                            reading and parsing the database each time (what compileCommandFor
//                            did before databases were cached), and `speedup` = reread / cached.
//
// Run: build/server/analysis/compile_db_benchmark
//
// Measured 2026-11-25 12:51 UTC, Debian 12 VM, 2 vCPU (load average 1.9: a clang-tidy run and a
// build beside it), RelWithDebInfo:
//   entries  database   cached lookup (wall / CPU)   re-read per lookup   speedup
//    1,000     348 KB    12.8 µs / 7.6 µs               7.1 ms               551×
//   10,000     3.5 MB    14.0 µs / 8.3 µs              72.2 ms             5,168×
// perfhat-fetch over a 10,000-file database thus spends ~0.14 s on flags instead of ~12 min
// (10,000 × 72 ms), and a keystroke's analysis no longer pays 72 ms before libclang starts.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "server/analysis/compile_db.h"

namespace {

namespace fs = std::filesystem;
using perfhat::analysis::compileCommandFor;
using perfhat::analysis::CompileDatabase;

std::string fileOf(int i) {
  return "/bench/src/module" + std::to_string(i % 97) + "/file" + std::to_string(i) + ".cc";
}

// Writes a database of `entries` CMake-style entries and backdates it, as a database that is
// not being rewritten right now is.
fs::path writeDatabase(int entries) {
  fs::path dir = fs::temp_directory_path() / ("perfhat-cdb-bench-" + std::to_string(::getpid()) +
                                              "-" + std::to_string(entries));
  fs::create_directories(dir);
  fs::path db = dir / "compile_commands.json";
  std::ofstream out(db);
  out << "[\n";
  for (int i = 0; i < entries; ++i) {
    out << (i ? ",\n" : "") << R"({"directory": "/bench/build", "command": "/usr/bin/c++ )"
        << R"(-DPROJECT_VERSION=\"1.2.3\" -I/bench/include -I/bench/build/generated )"
        << R"(-isystem /usr/include/project-deps -O2 -g -std=c++20 -Wall -Wextra -fPIC )"
        << "-o CMakeFiles/obj/file" << i << ".cc.o -c " << fileOf(i) << R"(", "file": ")"
        << fileOf(i) << R"(", "output": "CMakeFiles/obj/file)" << i << R"(.cc.o"})";
  }
  out << "\n]\n";
  out.close();
  fs::last_write_time(db, fs::file_time_type::clock::now() - std::chrono::hours(1));
  return dir;
}

// The lookup as it was before caching: read and parse the whole database for one file.
void rereadLookup(const fs::path& db, const std::string& file) {
  benchmark::DoNotOptimize(CompileDatabase::load(db.string()).commandFor(file));
}

void BM_CompileCommandFor(benchmark::State& state) {
  const int entries = static_cast<int>(state.range(0));
  const fs::path dir = writeDatabase(entries);
  const fs::path db = dir / "compile_commands.json";

  constexpr int kRereads = 5;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kRereads; ++i) rereadLookup(db, fileOf(i * 7 % entries));
  const double reread_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
      kRereads;

  int i = 0;
  t0 = std::chrono::steady_clock::now();
  for ([[maybe_unused]] auto _ : state) {
    benchmark::DoNotOptimize(compileCommandFor(fileOf(i), dir.string(), {}));
    i = (i + 1) % entries;
  }
  const double cached_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
      static_cast<double>(state.iterations());
  state.counters["reread_us"] = reread_us;
  state.counters["speedup"] = reread_us / cached_us;
  state.counters["db_bytes"] = static_cast<double>(fs::file_size(db));
  fs::remove_all(dir);
}
BENCHMARK(BM_CompileCommandFor)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

}  // namespace
