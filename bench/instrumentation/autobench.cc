// A call-heavy program for the cost of automatic instrumentation (issue #18): an in-memory
// key-value store in the style of a storage library's memtable (a templated skip list with a
// comparator object, an arena, a hash, small accessors), built three ways by CMake:
//   instr_autobench_plain  no instrumentation at all (the baseline)
//   instr_autobench_auto   perfhat_autoinstrument() (compiler hooks + libperfhat)
// Both run the same work; see bench/autobench.sh for the configurations and bench/README.md
// ("Automatic instrumentation") for the figures.
//
//   instr_autobench throughput [ops=2000000]   prints ops/s of a fixed mix of Put/Get/Scan
//   instr_autobench latency [reps=20000]       prints the mean latency of three functions:
//       the plain build times each call with the clock (clock floor subtracted), the
//       instrumented build prints what libperfhat reported (spans and phase-1 aggregates).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#ifdef AUTOBENCH_INSTRUMENTED
#include <map>

#include "perfhat/memory_exporter.hpp"
#include "perfhat/perfhat.hpp"
// Internal, for the calibration figures only (bench/CMakeLists.txt adds instrumentation/src).
#include "hook_stack.h"
#endif

namespace kv {

class Arena {
 public:
  char* allocate(size_t n) {
    n = (n + 7) & ~size_t{7};
    if (n > left_) refill(n);
    char* p = cur_;
    cur_ += n;
    left_ -= n;
    return p;
  }

 private:
  void refill(size_t n) {
    size_t size = n > kBlock ? n : kBlock;
    blocks_.emplace_back(new char[size]);
    cur_ = blocks_.back().get();
    left_ = size;
  }
  static constexpr size_t kBlock = 1 << 16;
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* cur_ = nullptr;
  size_t left_ = 0;
};

struct Slice {
  const char* data = nullptr;
  size_t size = 0;
  int compare(const Slice& o) const {
    size_t n = size < o.size ? size : o.size;
    int r = std::memcmp(data, o.data, n);
    if (r != 0) return r;
    return size < o.size ? -1 : (size > o.size ? 1 : 0);
  }
};

struct BytewiseComparator {
  int operator()(const Slice& a, const Slice& b) const { return a.compare(b); }
};

template <typename Key, class Comparator>
class SkipList {
 public:
  static constexpr int kMaxHeight = 12;
  SkipList(Comparator cmp, Arena* arena)
      : cmp_(cmp), arena_(arena), head_(new_node(Key{}, kMaxHeight)) {
    for (int i = 0; i < kMaxHeight; ++i) head_->set_next(i, nullptr);
  }
  void insert(const Key& key) {
    Node* prev[kMaxHeight];
    find_greater_or_equal(key, prev);
    int height = random_height();
    if (height > height_) {
      for (int i = height_; i < height; ++i) prev[i] = head_;
      height_ = height;
    }
    Node* x = new_node(key, height);
    for (int i = 0; i < height; ++i) {
      x->set_next(i, prev[i]->next(i));
      prev[i]->set_next(i, x);
    }
  }
  // First entry >= key, or nullptr.
  const Key* seek(const Key& key) const {
    Node* x = find_greater_or_equal(key, nullptr);
    return x ? &x->key : nullptr;
  }
  template <typename Fn>
  int scan(const Key& from, int n, Fn&& fn) const {
    int seen = 0;
    for (Node* x = find_greater_or_equal(from, nullptr); x && seen < n; x = x->next(0), ++seen) {
      fn(x->key);
    }
    return seen;
  }

 private:
  struct Node {
    Key key;
    Node* next_[1];
    Node* next(int level) const { return next_[level]; }
    void set_next(int level, Node* n) { next_[level] = n; }
  };
  Node* new_node(const Key& key, int height) {
    char* mem = arena_->allocate(sizeof(Node) + sizeof(Node*) * (height - 1));
    Node* n = reinterpret_cast<Node*>(mem);
    n->key = key;
    return n;
  }
  int random_height() {
    int h = 1;
    while (h < kMaxHeight && next_random() % 4 == 0) ++h;
    return h;
  }
  uint32_t next_random() {
    rnd_ = rnd_ * 1103515245u + 12345u;
    return rnd_ >> 8;
  }
  bool key_is_after_node(const Key& key, Node* n) const {
    return n != nullptr && cmp_(n->key, key) < 0;
  }
  Node* find_greater_or_equal(const Key& key, Node** prev) const {
    Node* x = head_;
    int level = height_ - 1;
    while (true) {
      Node* next = x->next(level);
      if (key_is_after_node(key, next)) {
        x = next;
      } else {
        if (prev != nullptr) prev[level] = x;
        if (level == 0) return next;
        --level;
      }
    }
  }

  Comparator cmp_;
  Arena* arena_;
  Node* head_;
  int height_ = 1;
  uint32_t rnd_ = 0xdeadbeef;
};

uint32_t hash(const char* data, size_t n, uint32_t seed) {
  uint32_t h = seed ^ static_cast<uint32_t>(n * 0xc6a4a793u);
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<uint8_t>(data[i])) * 16777619u;
  return h;
}

// One of the three timed functions: a leaf with a loop (no callees).
uint32_t checksum(const std::vector<char>& block) {
  uint32_t a = 1, b = 0;
  for (char c : block) {
    a = (a + static_cast<uint8_t>(c)) % 65521u;
    b = (b + a) % 65521u;
  }
  return (b << 16) | a;
}

class Db {
 public:
  Db() : list_(BytewiseComparator{}, &arena_) {}
  void put(const std::string& key, const std::string& value) {
    char* mem = arena_.allocate(key.size() + value.size());
    std::memcpy(mem, key.data(), key.size());
    std::memcpy(mem + key.size(), value.data(), value.size());
    list_.insert(Slice{mem, key.size()});
    bloom_ |= uint64_t{1} << (hash(key.data(), key.size(), 7) & 63);
  }
  // Timed: a skip-list search through many small calls.
  bool get(const std::string& key) const {
    if (!(bloom_ >> (hash(key.data(), key.size(), 7) & 63) & 1)) return false;
    Slice k{key.data(), key.size()};
    const Slice* found = list_.seek(k);
    return found != nullptr && found->compare(k) == 0;
  }
  // Timed: a search and a walk of n entries.
  uint64_t scan(const std::string& from, int n) const {
    uint64_t sum = 0;
    list_.scan(Slice{from.data(), from.size()}, n,
               [&](const Slice& s) { sum += hash(s.data, s.size, 1); });
    return sum;
  }

 private:
  Arena arena_;
  SkipList<Slice, BytewiseComparator> list_;
  uint64_t bloom_ = 0;
};

std::string key_of(uint64_t i) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "k%015llu",
                static_cast<unsigned long long>(i * 2654435761u % 1000003));
  return buf;
}

}  // namespace kv

namespace {

// Process CPU time (every thread, libperfhat's background thread included): on a shared machine
// it moves far less than wall time when other processes take the cores.
double cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The fixed mix: 1 put, 8 gets, 1 scan of 16 per 10 operations, 1 checksum per 100.
uint64_t run_mix(kv::Db& db, uint64_t ops, const std::vector<char>& block) {
  uint64_t acc = 0;
  for (uint64_t i = 0; i < ops; ++i) {
    uint64_t r = i % 10;
    if (r == 0) {
      db.put(kv::key_of(i + 50000), "value");
    } else if (r == 9) {
      acc += db.scan(kv::key_of(i), 16);
    } else {
      acc += db.get(kv::key_of(i * 7)) ? 1 : 0;
    }
    if (i % 100 == 0) acc += kv::checksum(block);
  }
  return acc;
}

void fill(kv::Db& db, int n) {
  for (int i = 0; i < n; ++i) db.put(kv::key_of(i), "value");
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "throughput";
  const std::vector<char> block(4096, 'x');
#ifdef AUTOBENCH_INSTRUMENTED
  auto exporter = std::make_shared<perfhat::MemoryExporter>();
  perfhat::Config cfg = perfhat::Config::from_env();
  cfg.endpoint.clear();
  if (!perfhat::init(cfg, exporter))
    std::fprintf(stderr, "init: %s\n", perfhat::last_error().c_str());
#endif
  kv::Db db;
  fill(db, 50000);
  if (mode == "throughput") {
    uint64_t ops = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 2000000;
    run_mix(db, ops / 20, block);  // warm-up (and, with a filter, the first Tigris cycle)
#ifdef AUTOBENCH_INSTRUMENTED
    if (!cfg.filter.empty()) perfhat::analyze_now();
#endif
    double t0 = now_s(), c0 = cpu_s();
    uint64_t acc = run_mix(db, ops, block);
    double dt = now_s() - t0, dc = cpu_s() - c0;
    std::printf("throughput %.0f ops/s wall (%.3f s), %.0f ops per CPU-second (%.3f s), acc %llu\n",
                static_cast<double>(ops) / dt, dt, static_cast<double>(ops) / dc, dc,
                static_cast<unsigned long long>(acc));
#ifdef AUTOBENCH_INSTRUMENTED
    auto c = perfhat::counters();
    std::printf("relevant functions %llu, spans recorded %llu\n",
                static_cast<unsigned long long>(c.relevant_functions),
                static_cast<unsigned long long>(c.spans_recorded));
#endif
    return 0;
  }
  // latency: the same calls in both builds; the harness times each with the clock (in the
  // instrumented build that time includes the probes; the plain build's is the reference).
#ifdef AUTOBENCH_INSTRUMENTED
  perfhat::flush();  // the fill's calls are not part of what is compared
  exporter->clear();
#endif
  int reps = argc > 2 ? std::atoi(argv[2]) : 2000;
  std::vector<double> t_get, t_put, t_scan, t_sum;
  double floor = 0;
  uint64_t acc = 0;
  for (int i = 0; i < reps; ++i) {
    std::string k = kv::key_of(static_cast<uint64_t>(i) * 7), s = kv::key_of(i);
    std::string fresh = kv::key_of(static_cast<uint64_t>(i) + 60000);
    double a = now_s();
    acc += db.get(k);
    double b = now_s();
    db.put(fresh, "value");
    double c = now_s();
    acc += db.scan(s, 64);
    double d = now_s();
    acc += kv::checksum(block);
    double e = now_s();
    double f = now_s();
    floor += f - e;
    t_get.push_back(b - a);
    t_put.push_back(c - b);
    t_scan.push_back(d - c);
    t_sum.push_back(e - d);
  }
  const double fl = floor / reps;
  auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return v.empty() ? 0 : sum / static_cast<double>(v.size());
  };
  std::printf("acc %llu\n", static_cast<unsigned long long>(acc));
  std::printf(
      "harness median get %.1f ns  put %.1f ns  scan %.1f ns  checksum %.1f ns  (clock %.1f "
      "ns subtracted)\n",
      (median(t_get) - fl) * 1e9, (median(t_put) - fl) * 1e9, (median(t_scan) - fl) * 1e9,
      (median(t_sum) - fl) * 1e9, fl * 1e9);
  // Means too: what phase 1 reports is a mean, outliers (preemption) included.
  std::printf("harness mean get %.1f ns  put %.1f ns  scan %.1f ns  checksum %.1f ns\n",
              (mean(t_get) - fl) * 1e9, (mean(t_put) - fl) * 1e9, (mean(t_scan) - fl) * 1e9,
              (mean(t_sum) - fl) * 1e9);
#ifdef AUTOBENCH_INSTRUMENTED
  if (const auto* c = perfhat::autoinstrument::probe_costs()) {
    std::printf(
        "calibrated probe cost per call (ticks): skipped %.1f counted %.1f clocked %.1f "
        "recorded %.1f; self clocked %.1f recorded %.1f\n",
        c->pair[0] / 256.0, c->pair[1] / 256.0, c->pair[2] / 256.0, c->pair[3] / 256.0,
        c->self[2] / 256.0, c->self[3] / 256.0);
  }
  perfhat::flush();
  struct Acc {
    std::vector<double> spans;
    double an = 0, ans = 0;
  };
  std::map<std::string, Acc> by;
  for (const auto& sp : exporter->spans()) {
    by[sp.function].spans.push_back(static_cast<double>(sp.end_unix_ns - sp.start_unix_ns));
  }
  for (const auto& ag : exporter->aggregates()) {
    Acc& x = by[ag.function];
    x.an += static_cast<double>(ag.count);
    x.ans += ag.sum_ns;
  }
  for (const char* f : {"kv::Db::get(", "kv::Db::put(", "kv::Db::scan(", "kv::checksum("}) {
    for (auto& [name, x] : by) {
      if (name.rfind(f, 0) != 0 || name.find("lambda") != std::string::npos) continue;
      std::printf(
          "reported %-16.16s spans %7zu median %8.1f ns | phase-1 calls %8.0f mean %8.1f ns\n",
          name.c_str(), x.spans.size(), median(x.spans), x.an, x.an > 0 ? x.ans / x.an : 0);
    }
  }
#endif
  return 0;
}
