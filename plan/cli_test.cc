// perfhat-plan as a process: the command-line contract of DESIGN.md §12, exit codes and messages.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

struct ToolRun {
  int rc = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

class PlanCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("perfhat-plan-cli-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  ToolRun run(const std::vector<std::string>& args) {
    std::string cmd = quote(PERFHAT_PLAN_BIN);
    for (const std::string& a : args) cmd += " " + quote(a);
    cmd += " >" + quote((dir_ / "out").string()) + " 2>" + quote((dir_ / "err").string());
    ToolRun r;
    int status = std::system(cmd.c_str());
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(dir_ / "out");
    r.err = slurp(dir_ / "err");
    return r;
  }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return (dir_ / name).string();
  }
  std::string paperClasses() {
    return write("classes.json", R"([
      {"name":"file","frequency_hz":359,"duty_ratio":0.30,"weight":2},
      {"name":"window","frequency_hz":189,"duty_ratio":0.23,"weight":1},
      {"name":"kernel","frequency_hz":153,"duty_ratio":0.09,"weight":1},
      {"name":"font","frequency_hz":334,"duty_ratio":0.11,"weight":1},
      {"name":"others","frequency_hz":630,"duty_ratio":0.27,"weight":1}])");
  }
  std::string units(std::size_t n) {
    std::string text = "# probe inventory\n";
    for (std::size_t i = 0; i < n; ++i) text += "ns::f" + std::to_string(i) + "(int, char) const\n";
    return write("units-" + std::to_string(n) + ".txt", text);
  }
  fs::path dir_;
};

TEST_F(PlanCli, HelpAndVersionEverywhere) {
  for (std::vector<std::string> args :
       {std::vector<std::string>{"--help"}, {"budget", "--help"}, {"variants", "--help"}}) {
    ToolRun r = run(args);
    EXPECT_EQ(r.rc, 0) << args.size();
    EXPECT_NE(r.out.find("Usage"), std::string::npos);
  }
  EXPECT_NE(run({"--help"}).out.find("variants"), std::string::npos);
  for (std::vector<std::string> args : {std::vector<std::string>{"--version"},
                                        {"budget", "--version"},
                                        {"variants", "--version"}}) {
    ToolRun r = run(args);
    EXPECT_EQ(r.rc, 0);
    EXPECT_EQ(r.out.rfind("perfhat-plan ", 0), 0u) << r.out;
  }
  ToolRun none = run({});
  EXPECT_EQ(none.rc, 2);
  EXPECT_NE(none.err.find("subcommand"), std::string::npos) << none.err;
}

TEST_F(PlanCli, BudgetProbingPaperUseCase) {
  ToolRun r = run({"budget", "--classes", paperClasses(), "--max-f", "925", "--probing"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["traced"], nlohmann::json({"file", "window", "font"}));
  EXPECT_EQ(j["sampled"], nlohmann::json({"kernel", "others"}));
  EXPECT_NEAR(j["information_value"].get<double>(), 1256.48, 1e-6);
  EXPECT_NEAR(j["probing_hz"].get<double>(), 43, 1e-9);
  EXPECT_EQ(j["method"], "exact");
  ASSERT_EQ(j["alternatives"].size(), 5u);
  EXPECT_NEAR(j["alternatives"][0]["information_value"].get<double>(), 1244.5, 1e-6);
  EXPECT_EQ(j["rates"].size(), 5u);
  EXPECT_NEAR(j["rates"][2]["rate_hz"].get<double>(), 43 * 0.09, 1e-9);  // kernel, by the probe
}

TEST_F(PlanCli, BudgetFromOverheadAndCosts) {
  // The paper's 5 % at MaxF 925 means T_report = 0.05 / 925 s.
  ToolRun r =
      run({"budget", "--classes", paperClasses(), "--max-overhead", "0.05", "--detect-cost-ns", "0",
           "--report-cost-ns", std::to_string(0.05 / 925 * 1e9), "--probing"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["max_f"].get<double>(), 925, 1e-3);
  EXPECT_EQ(j["traced"], nlohmann::json({"file", "window", "font"}));
  // Base case: detection of all 1665 events/s at 10 ns leaves (0.05 − 1.665e-5) / 50 µs.
  ToolRun base = run({"budget", "--classes", paperClasses(), "--max-overhead", "0.05",
                      "--detect-cost-ns", "10", "--report-cost-ns", "50000"});
  ASSERT_EQ(base.rc, 0) << base.err;
  auto b = nlohmann::json::parse(base.out);
  EXPECT_NEAR(b["max_f"].get<double>(), (0.05 - 1665 * 10e-9) / 50e-6, 1e-6);
  EXPECT_EQ(b["mode"], "rates");
  EXPECT_EQ(b["traced"][0], "file");
  EXPECT_EQ(b["sampled"].size(), 1u);
}

TEST_F(PlanCli, BudgetErrorsExitTwoWithAReason) {
  std::string classes = paperClasses();
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  std::vector<Case> cases = {
      {{"budget", "--classes", classes}, "either --max-f"},
      {{"budget", "--classes", classes, "--max-f", "9", "--max-overhead", "0.1"}, "either --max-f"},
      {{"budget", "--classes", classes, "--max-overhead", "0.1"}, "needs --detect-cost-ns"},
      {{"budget", "--classes", classes, "--max-overhead", "1.05", "--detect-cost-ns", "1",
        "--report-cost-ns", "5"},
       "(0, 1)"},
      {{"budget", "--classes", classes, "--max-f", "nan"}, "--max-f"},
      {{"budget", "--classes", classes, "--max-f", "-5"}, "--max-f"},
      {{"budget", "--classes", classes, "--max-f", "9", "--local-search"}, "--probing only"},
      {{"budget", "--max-f", "9"}, "--classes"},
      {{"budget", "--classes", classes, "--max-f", "9", "--bogus"}, "bogus"},
      {{"budget", "--classes", write("bad.json", R"([{"name":"file","duty_ratio":0.1}])"),
        "--max-f", "9"},
       "class \"file\" (#1): field \"frequency_hz\": missing"},
      {{"budget", "--classes", write("text.json", "file 359 0.3"), "--max-f", "9"},
       "not valid JSON"},
      {{"budget", "--classes", (dir_ / "missing.json").string(), "--max-f", "9"}, "cannot open"},
      {{"budget", "--classes", classes, "--max-overhead", "0.00001", "--detect-cost-ns", "100",
        "--report-cost-ns", "5"},
       "detecting every event alone"},
  };
  for (const Case& c : cases) {
    ToolRun r = run(c.args);
    EXPECT_EQ(r.rc, 2) << c.message;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
}

TEST_F(PlanCli, VariantsManifestContract) {
  ToolRun r = run({"variants", "--units", units(20), "--h-bound", "3", "--variants", "7",
                   "--strategy", "rb", "--seed", "42", "--replicas", "10"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["strategy"], "rb");
  EXPECT_EQ(j["seed"], 42);
  EXPECT_EQ(j["h_bound"], 3);
  EXPECT_EQ(j["release"], "1");
  ASSERT_EQ(j["variants"].size(), 7u);
  std::map<std::string, int> counts;
  for (std::size_t v = 0; v < 7; ++v) {
    EXPECT_EQ(j["variants"][v]["id"], v);
    EXPECT_EQ(j["variants"][v]["units"].size(), 3u);
    for (const auto& u : j["variants"][v]["units"]) ++counts[u.get<std::string>()];
  }
  EXPECT_EQ(counts.size(), 20u);  // 21 slots ≥ 20 units: every unit probed
  EXPECT_EQ(counts.count("ns::f0(int, char) const"), 1u);
  EXPECT_EQ(j["assignment"], nlohmann::json({0, 1, 2, 3, 4, 5, 6, 0, 1, 2}));
  EXPECT_EQ(j["group_bounds"][0]["h"], 3);
  // Same seed, same manifest; the default strategy is grb.
  EXPECT_EQ(run({"variants", "--units", units(20), "--h-bound", "3", "--variants", "7",
                 "--strategy", "rb", "--seed", "42", "--replicas", "10"})
                .out,
            r.out);
  ToolRun d = run({"variants", "--units", units(20), "--h-bound", "3", "--variants", "2"});
  ASSERT_EQ(d.rc, 0) << d.err;
  EXPECT_EQ(nlohmann::json::parse(d.out)["strategy"], "grb");
}

TEST_F(PlanCli, RbmContinuesFromTheHistory) {
  std::string u = units(10), history = (dir_ / "history").string();
  // Release 1: 2 variants × 3 probes on 10 units leaves 4 units unprobed.
  ASSERT_EQ(run({"variants", "--units", u, "--h-bound", "3", "--variants", "2", "--strategy", "rb",
                 "--seed", "1", "--history", history})
                .rc,
            0);
  ToolRun second = run({"variants", "--units", u, "--h-bound", "4", "--variants", "1", "--strategy",
                        "rbm", "--seed", "2", "--history", history});
  ASSERT_EQ(second.rc, 0) << second.err;
  EXPECT_EQ(nlohmann::json::parse(second.out)["release"], "2");
  // With memory, the 4 probes of release 2 go exactly to the 4 units release 1 missed.
  std::map<std::string, int> counts;
  for (const char* f : {"release-1.json", "release-2.json"}) {
    const auto release = nlohmann::json::parse(slurp(fs::path(history) / f));
    for (const auto& v : release["variants"])
      for (const auto& k : v["units"]) ++counts[k.get<std::string>()];
  }
  EXPECT_EQ(counts.size(), 10u);
  for (const auto& [key, n] : counts) EXPECT_EQ(n, 1) << key;
  // A release id is never reused.
  ToolRun again = run({"variants", "--units", u, "--h-bound", "1", "--variants", "1", "--history",
                       history, "--release", "2"});
  EXPECT_EQ(again.rc, 2);
  EXPECT_NE(again.err.find("already"), std::string::npos);
}

TEST_F(PlanCli, VariantsErrorsExitTwoWithAReason) {
  std::string many = units(100);
  std::string u = units(5);
  std::string binary = write("binary", std::string("\x7f"
                                                   "ELF\0\0\0",
                                                   7));
  std::string huge = (dir_ / "huge").string();
  std::ofstream(huge).close();
  fs::resize_file(huge, (64u << 20) + 1);  // sparse: no disk used
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  std::vector<Case> cases = {
      {{"variants", "--units", u, "--h-bound", "2", "--variants", "2", "--strategy", "x"},
       "unknown --strategy"},
      {{"variants", "--units", u, "--h-bound", "6", "--variants", "2"}, "more than the 5 units"},
      {{"variants", "--units", u, "--h-bound", "0", "--variants", "2"}, "--h-bound"},
      {{"variants", "--units", u, "--h-bound", "1", "--variants", "0"}, "--variants"},
      {{"variants", "--units", binary, "--h-bound", "1", "--variants", "1"}, "binary"},
      {{"variants", "--units", huge, "--h-bound", "1", "--variants", "1"}, "larger than"},
      {{"variants", "--units", u, "--h-bound", "1", "--variants", "1", "--strategy", "rbm"},
       "--history"},
      {{"variants", "--units", u, "--h-bound", "1", "--variants", "1", "--strategy", "rb",
        "--groups", write("g.json", "{}")},
       "grb only"},
      {{"variants", "--units", u, "--h-bound", "1", "--variants", "1", "--groups",
        write("g2.json", "[")},
       "groups file"},
      {{"variants", "--units", u, "--h-bound", "1", "--variants", "1", "--release", "../x"},
       "--release"},
      {{"variants", "--units", u, "--h-bound", "-1", "--variants", "1"}, "--h-bound"},
      {{"variants", "--h-bound", "1", "--variants", "1"}, "--units"},
      {{"variants", "--units", many, "--h-bound", "1", "--variants", "40000000", "--replicas", "1"},
       "--variants × units"},
  };
  for (const Case& c : cases) {
    ToolRun r = run(c.args);
    EXPECT_EQ(r.rc, 2) << c.message;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.message << " / " << r.err;
    EXPECT_TRUE(r.out.empty());
  }
}

// §1.11 of the extract: with every site running every unit equally often, the variants' overhead
// is exactly h/|U| and RB's coverage min(1, n·h/|U|), whatever the corpus.
TEST_F(PlanCli, SimulateDatasetIndependentChecks) {
  std::string u = units(40);
  ToolRun plan = run({"variants", "--units", u, "--h-bound", "4", "--variants", "6", "--strategy",
                      "rb", "--seed", "3", "--replicas", "12"});
  ASSERT_EQ(plan.rc, 0) << plan.err;
  std::string manifest = write("manifest.json", plan.out);
  std::string trace = "# site\tkey\n";
  for (int site = 0; site < 12; ++site)
    for (int i = 0; i < 40; ++i)
      for (int repeat = 0; repeat < 3; ++repeat)
        trace += std::to_string(site) + "\tns::f" + std::to_string(i) + "(int, char) const\n";
  std::string trace_path = write("trace.tsv", trace);
  ToolRun r = run({"simulate", "--manifest", manifest, "--trace", trace_path, "--seed", "1"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["records"], 12 * 40 * 3);
  EXPECT_EQ(j["sites"], 12);
  EXPECT_EQ(j["hot_k"], 2);  // 5 % of 40
  EXPECT_EQ(j["techniques"][0]["name"], "variants");
  EXPECT_NEAR(j["techniques"][0]["overhead"].get<double>(), 10.0, 1e-9);  // 4 / 40
  EXPECT_NEAR(j["techniques"][0]["coverage"].get<double>(), 60.0, 1e-9);  // 24 slots / 40
  // Dynamic samples about 1 in 50.5 records.
  EXPECT_NEAR(j["techniques"][1]["overhead"].get<double>(), 100 / 50.5, 0.8);

  ToolRun bad = run({"simulate", "--manifest", manifest, "--trace", write("bad.tsv", "0 f()\n")});
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("trace line 1: expected SITE<TAB>FUNCTION KEY"), std::string::npos)
      << bad.err;
  ToolRun site = run({"simulate", "--manifest", manifest, "--trace", write("s.tsv", "12\tf\n")});
  EXPECT_EQ(site.rc, 2);
  EXPECT_NE(site.err.find("site 12"), std::string::npos) << site.err;
  ToolRun notmanifest = run({"simulate", "--manifest", trace_path, "--trace", trace_path});
  EXPECT_EQ(notmanifest.rc, 2);
  EXPECT_NE(notmanifest.err.find("manifest"), std::string::npos);
}

}  // namespace
