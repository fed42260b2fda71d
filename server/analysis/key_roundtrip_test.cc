// One canonical spelling per function (DESIGN §3), proven on real mangled names: a source of the
// shapes real C++ code has is compiled with g++ and with clang++, the defined symbols are taken
// from the object file with nm, demangled and canonicalised, and compared with the keys the
// language server builds from libclang for the same declarations. The two sides must agree
// exactly (non-template functions: by mangled name) or, for instantiations, on the template's
// qualified name (how the handler and the matcher attach them to the template's definition).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "common/function_key.h"
#include "server/analysis/ast_builder.h"
#include "server/analysis/testing/test_tu.h"

namespace perfhat::analysis {
namespace {

// Declarations whose parameter types two spellers disagree on: typedefs (`std::string`, `size_t`,
// `Slice`), cv placement, pointers to functions and members, arrays by reference, nested and
// local classes, lambdas, operators, anonymous namespaces, variadics, templates.
constexpr const char* kRoundtripSource = R"src(
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>
namespace store {
struct Slice { const char* data; size_t size; };
typedef Slice Key;
class Comparator {
 public:
  virtual ~Comparator() {}
  virtual int Compare(const Slice& a, const Slice& b) const = 0;
};
class BytewiseComparator : public Comparator {
 public:
  int Compare(const Slice& a, const Slice& b) const override { return int(a.size - b.size); }
  void FindShortestSeparator(std::string* start, Slice const& limit) const { start->size(); }
};
void Visit(const Key& k, int (*fn)(const Slice&, void*), void* arg) { fn(k, arg); }
void VisitMember(int (Comparator::*fn)(const Slice&, const Slice&) const) {}
uint64_t Hash(const char* data, size_t n, uint32_t seed) { return n + seed; }
void Fill(char (&buf)[16], const int (&weights)[4]) {}
void Move(std::string&& s, std::vector<std::string>&& v) {}
std::map<std::string, std::vector<int>> Index(const std::map<std::string, int>& m) { return {}; }
void Callback(std::function<void(const Slice&)> f) {}
void Owned(std::unique_ptr<Comparator> c, const std::shared_ptr<const Key>& k) {}
int Printf(const char* fmt, ...) { return 0; }
struct Outer {
  struct Inner {
    void Run(volatile int* p) const {}
  };
  Outer& operator=(const Outer&) { return *this; }
  bool operator==(const Outer&) const { return true; }
  explicit operator bool() const { return true; }
  int operator()(int x) { return x; }
};
enum class Level { kInfo, kWarn };
void Log(Level l, const char* const* argv, unsigned char c, signed char s, long long ll) {}
template <typename T> T Max(T a, T b) { return a < b ? b : a; }
template <typename K, typename V> struct SkipList {
  void Insert(const K& key, V* value) {}
  bool Contains(const K& key) const { return false; }
};
template struct SkipList<Slice, std::string>;
template int Max<int>(int, int);
template std::string Max<std::string>(std::string, std::string);
int Local(int n) {
  struct Counter {
    int Add(int k) { return k + 1; }
  };
  auto twice = [](int y) { return 2 * y; };
  Counter c;
  return c.Add(twice(n));
}
// Inline members are emitted only where used.
int UseAll() {
  Outer o, q;
  o = q;
  int r = o(3) + ((o == q) && bool(o));
  Outer::Inner().Run(nullptr);
  BytewiseComparator c;
  Slice s{};
  std::string str;
  c.FindShortestSeparator(&str, s);
  return r + c.Compare(s, s);
}
}  // namespace store
namespace {
int Hidden(const store::Slice& s) { return int(s.size); }
}  // namespace
int UseHidden() { return Hidden(store::Slice{}); }
)src";

// Runs `cmd`, returns its standard output.
std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

// Defined text symbols of `object` (nm: T/t/W/w), mangled.
std::set<std::string> definedSymbols(const std::string& object) {
  std::set<std::string> out;
  std::string text = run("nm --defined-only " + object);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    // "<address> <type> <name>"
    size_t a = line.find(' ');
    if (a == std::string::npos || a + 3 > line.size()) continue;
    char type = line[a + 1];
    if (type != 'T' && type != 't' && type != 'W' && type != 'w') continue;
    std::string name = line.substr(a + 3);
    if (name.rfind("_Z", 0) == 0) out.insert(name);
  }
  return out;
}

class KeyRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(KeyRoundTrip, SymbolsOfTheCompilerSpellTheKeysOfLibclang) {
  const std::string compiler = GetParam();
  if (run("command -v " + compiler).empty()) GTEST_SKIP() << compiler << " not installed";
  testing::TestTU t;
  t.code = kRoundtripSource;
  t.extra_args = {"-std=c++17"};
  auto built = t.build();
  const ParsedUnit& unit = built->unit;
  ASSERT_FALSE(unit.functions.empty());

  std::filesystem::path dir = built->dir;
  std::ofstream(dir / "roundtrip.cc") << kRoundtripSource;
  std::string object = (dir / ("roundtrip-" + compiler + ".o")).string();
  std::string log = run(compiler + " -std=c++17 -O0 -c " + (dir / "roundtrip.cc").string() +
                        " -o " + object + " 2>&1");
  ASSERT_TRUE(std::filesystem::exists(object)) << log;
  std::set<std::string> symbols = definedSymbols(object);
  ASSERT_GT(symbols.size(), 20u);

  // Keys and qualified names of the symbols, as the handler stores them.
  std::map<std::string, std::string> key_of_symbol;
  std::set<std::string> names;
  for (const auto& m : symbols) {
    std::string key = normalizeFunctionKey(m);
    key_of_symbol[m] = key;
    names.insert(qualifiedName(key));
  }

  int compared = 0, templates = 0;
  for (const FunctionInfo& f : unit.functions) {
    if (f.key.find("store::") == std::string::npos && f.key.find("Hidden") == std::string::npos)
      continue;
    if (f.implicit) continue;  // compiler-defined members: emitted only where used
    auto it = f.mangled.empty() ? key_of_symbol.end() : key_of_symbol.find(f.mangled);
    if (it != key_of_symbol.end()) {
      // The same declaration, spelt by the compiler's symbol and by libclang: one key.
      EXPECT_EQ(it->second, f.key)
          << compiler << ": " << it->first << " (" << demangle(it->first) << ")";
      ++compared;
    } else if (f.key.find("<") != std::string::npos || f.key.find("lambda") != std::string::npos ||
               f.key.find(")::") != std::string::npos) {
      // A template's definition or a function local to another: found by qualified name among
      // the symbols (instantiations, GCC and Clang closure and local-class names).
      EXPECT_TRUE(names.count(qualifiedName(f.key))) << compiler << ": " << f.key;
      ++templates;
    }
  }
  EXPECT_GE(compared, 20) << compiler;
  EXPECT_GE(templates, 3) << compiler;
}

INSTANTIATE_TEST_SUITE_P(Compilers, KeyRoundTrip, ::testing::Values("g++", "clang++"),
                         [](const auto& info) { return info.param == "g++" ? "Gcc" : "Clang"; });

}  // namespace
}  // namespace perfhat::analysis
