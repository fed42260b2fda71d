// An edit re-analyses only what it can have changed (server/analysis/inference_reuse.h): after
// every kind of edit the server's snapshot must be the one a fresh, full analysis of the same
// text gives, and the functions the edit cannot reach must have kept their last result.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "server/analysis/analyze.h"
#include "server/analysis/compile_db.h"
#include "server/analysis/feedback_view.h"
#include "server/features/features.h"
#include "server/index/workspace_index.h"
#include "server/server/clang_analyzer.h"

namespace perfhat::server {
namespace {

namespace fs = std::filesystem;

// `helper` has no data: its callers are costed from its body. `rec` calls itself.
constexpr const char* kText = R"src(#include "work.h"
int leaf(int n);
int helper(int n) {
  int s = 0;
  for (int i = 0; i < 10; ++i) s += leaf(i);
  return s;
}
int user(int n) {
  int t = 0;
  for (int i = 0; i < n; ++i) t += helper(i);
  return t;
}
int lonely(int n) { return n * 3; }
int measured(int n) {
  if (n > 2) return leaf(n) + work(n);
  return leaf(1);
}
int rec(int n) { return n > 0 ? rec(n - 1) + leaf(n) : 0; }
int usesRec(int n) { return rec(n) + 1; }
int viaHeader(int n) { return work(n); }
int elsewhere(int n);
int viaIndex(int n) { return elsewhere(n); }
)src";

constexpr const char* kHeader = R"src(#pragma once
int leaf(int n);
inline int work(int n) {
  int s = 0;
  for (int i = 0; i < 5; ++i) s += leaf(n);
  return s;
}
)src";

FeedbackItem item(const std::string& key, double mean_ns) {
  FeedbackItem it;
  it.key = key;
  Stats s;
  s.count = 100;
  s.mean_ns = mean_ns;
  s.p50_ns = mean_ns;
  s.p90_ns = 2 * mean_ns;
  s.p99_ns = 4 * mean_ns;
  it.stats = s;
  return it;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// Everything a snapshot shows and the figures behind it: per function its match, ranges and
// every node's estimate, and what the editor gets (hints, hovers with their derivations, code
// lenses, diagnostics).
std::string observable(const analysis::Snapshot& s) {
  std::ostringstream o;
  o.precision(17);
  features::Options opts;
  for (const auto& f : s.functions) {
    o << "fn " << f.key << " @" << f.range.start.line << ":" << f.range.start.column << "-"
      << f.range.end.line << " match " << static_cast<int>(f.match) << " changed " << f.changed
      << " added " << f.added.size() << " hash " << f.body_hash << "\n";
    for (const auto& c : f.added)
      o << "  cost " << c.node << " " << c.total.mean_ns << " x" << c.executions << "\n";
    for (const auto& n : f.nodes) {
      const analysis::Estimate& e = n.estimate;
      o << "  node " << n.id << " " << static_cast<int>(e.provenance) << " " << e.dist.mean_ns
        << " " << e.dist.p50_ns << " " << e.dist.p90_ns << " " << e.dist.p99_ns << " u"
        << e.unknown_parts << " f" << e.floor_mean_ns << " s" << e.spread_lo << "/" << e.spread_hi
        << " i" << (e.interval ? e.interval->hi.mean_ns : -1) << " it"
        << n.loop.iterations.value_or(-1) << " b" << n.branch.probability.value_or(-1) << " pc"
        << n.call.production_calls << " " << n.call.in_workspace << "\n";
      if (auto h = features::hover(s, n.range.start, opts)) o << h->markdown << "\n";
    }
  }
  for (const auto& h : features::inlayHints(s, {{0, 0}, {100000, 0}}, opts))
    o << "hint " << h.position.line << ":" << h.position.column << " " << h.label << " | "
      << h.tooltip << "\n";
  for (const auto& l : features::codeLenses(s, opts)) o << "lens " << l.title << "\n";
  for (const auto& d : features::diagnostics(s, opts)) o << "diag " << d.message << "\n";
  for (const auto& p : s.problems) o << "problem " << p.message << "\n";
  return o.str();
}

class InferenceReuseEdits : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/perfhat-inference-reuse-XXXXXX";
    dir_ = mkdtemp(tmpl);
    path_ = dir_ + "/main.cc";
    std::ofstream(dir_ + "/work.h") << kHeader;
    std::ofstream(path_) << kText;
    analyzer_.setBackgroundIndex(false);
    analyzer_.configure(Config(), dir_);
    setFeedback({item("leaf(int)", 2e3), item("measured(int)", 50e3)});
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void setFeedback(std::vector<FeedbackItem> items) {
    feedback_ = std::make_shared<analysis::InMemoryFeedback>(std::move(items));
  }
  // The server's build of `text` (reusing the last one), checked against a fresh full analysis.
  analysis::SnapshotPtr edit(const std::string& text) {
    std::vector<std::string> warnings;
    auto snap = analyzer_.analyze(
        {path_, text, ++version_}, [this](const std::vector<std::string>&) { return feedback_; },
        warnings);
    EXPECT_TRUE(snap);
    if (!snap) return snap;
    const analysis::AnalysisOptions& o = analyzer_.options();
    auto cc = analysis::compileCommandFor(path_, o.compile_commands, o.fallback_flags);
    auto tu = analysis::TranslationUnit::parse(path_, text, cc.args).value;
    EXPECT_TRUE(tu);
    if (tu) {
      auto full = analysis::analyze(*tu, *feedback_, o, version_);
      EXPECT_EQ(observable(*snap), observable(*full)) << "v" << version_ << " differs";
    }
    return snap;
  }
  const analysis::InferenceReuse::Last& last() {
    last_ = analyzer_.lastInference(path_);
    return last_;
  }
  static bool has(const analysis::Snapshot& s, const std::string& key) {
    for (const auto& f : s.functions)
      if (f.key == key) return true;
    return false;
  }

  std::string dir_, path_;
  ClangAnalyzer analyzer_;
  std::shared_ptr<analysis::InMemoryFeedback> feedback_;
  int version_ = 0;
  analysis::InferenceReuse::Last last_;
  std::vector<std::string> warnings_;
};

TEST_F(InferenceReuseEdits, EveryKindOfEditGivesWhatAFullAnalysisGives) {
  edit(kText);
  std::string text = kText;
  // A body edit that adds a call.
  text = replaced(text, "n * 3;", "n * 4 + leaf(n);");
  edit(text);
  // The callee a caller in the same file is costed from.
  text = replaced(text, "i < 10;", "i < 40;");
  edit(text);
  // A signature change.
  text = replaced(text, "int lonely(int n)", "long lonely(long n)");
  auto snap = edit(text);
  EXPECT_TRUE(has(*snap, "lonely(long)"));
  // A function added at the end, calling into the file; then one added above the others.
  text += "int added(int n) { return user(n) + helper(2); }\n";
  edit(text);
  text =
      replaced(text, "int helper(int n) {", "int first() { return leaf(3); }\nint helper(int n) {");
  edit(text);
  // Removed again, one by one.
  text = replaced(text, "int first() { return leaf(3); }\n", "");
  edit(text);
  text = replaced(text, "int added(int n) { return user(n) + helper(2); }\n", "");
  snap = edit(text);
  EXPECT_FALSE(has(*snap, "added(int)"));
  // A comment inside a body and a line added inside one (what is below moves).
  text = replaced(text, "  return t;", "  /*x*/ return t;");
  edit(text);
  text = replaced(text, "  return s;", "  s += 1;\n  return s;");
  edit(text);
  // Back to the start.
  edit(kText);
}

TEST_F(InferenceReuseEdits, AnEditKeepsTheResultsOfWhatItCannotReach) {
  edit(kText);
  EXPECT_EQ(last().reused, 0u);
  const size_t all = last().analysed;
  // A comment in lonely's body: lonely is walked again; rec and usesRec reach a cycle and are
  // analysed again too; the others keep their results.
  edit(replaced(kText, "n * 3;", "n * 3; /*x*/"));
  EXPECT_EQ(last().all_analysed_because, analysis::NoReuse::None);
  EXPECT_EQ(last().analysed, 3u) << "lonely, rec, usesRec";
  EXPECT_EQ(last().reused, all - 3);
}

// The next snapshot holds the last results it reuses, not copies of them; what was analysed
// again is new, and a reader still holding the last snapshot sees what it saw.
TEST_F(InferenceReuseEdits, ASnapshotSharesTheResultsItReusesWithTheLastOne) {
  auto before = edit(kText);
  const std::string seen = observable(*before);
  auto after = edit(replaced(kText, "i < 10;", "i < 40;"));
  auto find = [](const analysis::Snapshot& s, const std::string& key) {
    const analysis::FunctionInfo* out = nullptr;
    for (const auto& f : s.functions)
      if (f.key == key) out = &f;
    EXPECT_TRUE(out) << key;
    return out;
  };
  EXPECT_EQ(find(*before, "lonely(int)"), find(*after, "lonely(int)")) << "reused: shared";
  EXPECT_EQ(find(*before, "measured(int)"), find(*after, "measured(int)")) << "reused: shared";
  EXPECT_NE(find(*before, "helper(int)"), find(*after, "helper(int)")) << "analysed again";
  EXPECT_NE(find(*before, "user(int)"), find(*after, "user(int)")) << "calls helper";
  EXPECT_EQ(observable(*before), seen);
}

TEST_F(InferenceReuseEdits, ACallerOfAChangedCalleeIsAnalysedAgain) {
  edit(kText);
  const size_t all = last().analysed;
  auto snap = edit(replaced(kText, "i < 10;", "i < 40;"));
  // helper (walked again), user (calls it), rec and usesRec (recursive).
  EXPECT_EQ(last().analysed, 4u);
  EXPECT_EQ(last().reused, all - 4);
}

TEST_F(InferenceReuseEdits, AFunctionThatMovedIsAnalysedAgain) {
  edit(kText);
  // A line above everything below `helper`'s loop moves those functions down.
  edit(replaced(kText, "  return s;", "  s += 1;\n  return s;"));
  EXPECT_GE(last().analysed, 6u) << "helper and every function below it";
}

TEST_F(InferenceReuseEdits, OtherFeedbackIsAnalysedAgain) {
  edit(kText);
  setFeedback({item("leaf(int)", 3e3), item("measured(int)", 50e3)});
  edit(kText);
  EXPECT_EQ(last().reused, 0u);
  EXPECT_EQ(last().all_analysed_because, analysis::NoReuse::OtherFeedback);
  edit(kText);  // the same feedback again: reused
  EXPECT_GT(last().reused, 0u);
}

TEST_F(InferenceReuseEdits, AHeaderChangedOnDiskIsAnalysedAgain) {
  auto before = edit(kText);
  for (const auto& f : before->functions)
    if (f.key == "viaHeader(int)") {
      EXPECT_NEAR(f.root().estimate.dist.mean_ns, 5 * 2e3, 1);
    }
  std::ofstream(dir_ + "/work.h", std::ios::trunc) << replaced(kHeader, "i < 5;", "i < 50;");
  fs::last_write_time(dir_ + "/work.h", fs::file_time_type::clock::now() + std::chrono::hours(1));
  auto snap = edit(kText);
  EXPECT_EQ(last().reused, 0u);
  EXPECT_EQ(last().all_analysed_because, analysis::NoReuse::OtherWorkspaceBodies);
  for (const auto& f : snap->functions)
    if (f.key == "viaHeader(int)") {
      EXPECT_NEAR(f.root().estimate.dist.mean_ns, 50 * 2e3, 1);
    }
}

// A class's implicit members start where the class does, before its inline members: the walk
// makes them after the members, and the unit sorts them first. What the walk says of each
// function (taken unchanged from the last build, or walked) must follow it through that sort:
// with more inline members than implicit ones, an edited first member (same range) would
// otherwise get the last member's "unchanged" and keep its old result.
TEST_F(InferenceReuseEdits, AnInlineMemberOfAClassWithImplicitMembersIsAnalysedAgain) {
  std::string text = std::string(kText) +
                     "struct Box {\n"
                     "  int get(int n) {\n"
                     "    int s = 0;\n"
                     "    for (int k = 0; k < 10; ++k) s += leaf(k);\n"
                     "    return s;\n"
                     "  }\n";
  for (int i = 1; i <= 7; ++i)
    text += "  int m" + std::to_string(i) + "() { return " + std::to_string(i) + "; }\n";
  text += "};\nint useBox(int n) { Box b; return b.get(n); }\n";
  edit(text);
  // The same length: the member keeps its range.
  edit(replaced(text, "k < 10;", "k < 70;"));
  EXPECT_EQ(last().all_analysed_because, analysis::NoReuse::None);
  EXPECT_GT(last().reused, 0u);
}

// A chain cut at max_body_depth memoizes the bodies above the cut as unknown: a build whose
// chains are that deep is not kept, so when an edit makes the chain shorter the functions it
// did not touch get lf's cost as a fresh analysis gives them, not the cut's unknown.
TEST_F(InferenceReuseEdits, ResultsOfAChainCutAtTheDepthLimitAreNotReused) {
  Config cfg;
  cfg.analysis = {{"max_body_depth", 12}};
  analyzer_.configure(cfg, dir_);
  setFeedback({item("lf(int)", 2e3)});
  std::string text = "int lf(int n);\n";
  for (const char* chain : {"g", "c"})
    for (int i = 1; i <= 6; ++i)
      text += "int " + std::string(chain) + std::to_string(i) + "(int n);\n";
  // g first: the full analysis reaches c6 through g1..g6 and c1..c5 and cuts there.
  text += "int g(int n) { return g1(n); }\nint f(int n) { return c1(n); }\n";
  for (const char* chain : {"g", "c"})
    for (int i = 1; i <= 6; ++i)
      text += "int " + std::string(chain) + std::to_string(i) + "(int n) { return " +
              (i < 6 ? std::string(chain) + std::to_string(i + 1)
                     : std::string(chain[0] == 'g' ? "c1" : "lf")) +
              "(n); }\n";
  auto mean = [](const analysis::Snapshot& s, const std::string& key) {
    for (const auto& fn : s.functions)
      if (fn.key == key) return fn.root().estimate.dist.mean_ns;
    return -1.0;
  };
  ASSERT_TRUE(edit(text));
  // Only g6 changes, to the same length (nothing moves): no chain reaches the limit now.
  auto after =
      edit(replaced(text, "int g6(int n) { return c1(n); }", "int g6(int n) { return lf(n); }"));
  ASSERT_TRUE(after);
  EXPECT_EQ(last().all_analysed_because, analysis::NoReuse::LastReachedDepthLimit);
  EXPECT_NEAR(mean(*after, "f(int)"), 2e3, 1);
  EXPECT_NEAR(mean(*after, "c1(int)"), 2e3, 1);
}

// A build that throws after the walk (here the feedback fetch; Server::rebuild catches it and
// carries on) must not leave the walk a build ahead of the inference: the next build, whose text
// the walk then takes as unchanged, analyses everything and gives what a full analysis gives.
TEST_F(InferenceReuseEdits, ABuildThatThrowsPartWayLeavesNothingToReuse) {
  edit(kText);
  // helper's loop bound, at the same length: nothing moves, helper and user cost more.
  const std::string text = replaced(kText, "i < 10;", "i < 90;");
  std::vector<std::string> warnings;
  EXPECT_THROW(
      analyzer_.analyze(
          {path_, text, ++version_},
          [](const std::vector<std::string>&) -> std::shared_ptr<const analysis::FeedbackView> {
            throw std::runtime_error("the feedback store went away");
          },
          warnings),
      std::runtime_error);
  edit(text);
  EXPECT_EQ(last().reused, 0u);
  EXPECT_EQ(last().all_analysed_because, analysis::NoReuse::LastStoppedPartWay);
  edit(text);
  EXPECT_GT(last().reused, 0u) << "kept again after a build that finished";
}

// A callee defined in another file, costed from the workspace index's summary of it: when the
// index learns a new body for it, its callers are analysed again.
TEST_F(InferenceReuseEdits, AnotherFilesNewBodyIsAnalysedAgain) {
  auto index = [&](int bound) {
    const std::string other = dir_ + "/other.cc";
    const std::string text =
        "int leaf(int n);\nint elsewhere(int n) {\n  int s = 0;\n"
        "  for (int i = 0; i < " +
        std::to_string(bound) + "; ++i) s += leaf(i);\n  return s;\n}\n";
    auto tu = analysis::TranslationUnit::parse(other, text, {"-xc++", "-std=c++17"}).value;
    ASSERT_TRUE(tu);
    analyzer_.workspaceIndex()->setIndexed(other, analysis::buildAst(*tu, {}).functions);
  };
  auto mean = [](const analysis::Snapshot& s) {
    for (const auto& f : s.functions)
      if (f.key == "viaIndex(int)") return f.root().estimate.dist.mean_ns;
    return -1.0;
  };
  index(5);
  auto before = analyzer_.analyze(
      {path_, kText, 1}, [this](auto&) { return feedback_; }, warnings_);
  EXPECT_NEAR(mean(*before), 5 * 2e3, 1);
  index(50);
  auto after = analyzer_.analyze(
      {path_, kText, 2}, [this](auto&) { return feedback_; }, warnings_);
  EXPECT_EQ(last().all_analysed_because, analysis::NoReuse::OtherWorkspaceBodies);
  EXPECT_NEAR(mean(*after), 50 * 2e3, 1);
  analyzer_.analyze(
      {path_, kText, 3}, [this](auto&) { return feedback_; }, warnings_);
  EXPECT_GT(last().reused, 0u) << "the same index bodies again";
}

}  // namespace
}  // namespace perfhat::server
