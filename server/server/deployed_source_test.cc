// "What production ran" against a real git repository: the revision the feedback names, the
// file's text at it, and the analysis that compares the document with it.
#include "server/server/deployed_source.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "common/subprocess.h"
#include "server/analysis/feedback_view.h"
#include "server/server/clang_analyzer.h"

namespace perfhat::server {
namespace {

namespace fs = std::filesystem;

class GitRepo : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "perfhat-deployed-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = fs::canonical(tmpl).string();
    git({"init", "-q"});
  }
  void TearDown() override { fs::remove_all(dir_); }

  void git(std::vector<std::string> args) {
    std::vector<std::string> argv = {"git", "-C",         dir_, "-c", "user.email=t@t",
                                     "-c",  "user.name=t"};
    argv.insert(argv.end(), args.begin(), args.end());
    SubprocessResult r = runSubprocess(argv);
    ASSERT_TRUE(r.ok()) << r.err << r.error;
  }
  void write(const std::string& rel, const std::string& text) {
    std::ofstream(fs::path(dir_) / rel) << text;
  }
  std::string commit(const std::string& message) {
    git({"add", "-A"});
    git({"commit", "-q", "-m", message});
    SubprocessResult r = runSubprocess({"git", "-C", dir_, "rev-parse", "HEAD"});
    std::string h = r.out;
    while (!h.empty() && h.back() == '\n') h.pop_back();
    return h;
  }
  std::string path(const std::string& rel) const { return (fs::path(dir_) / rel).string(); }

  std::string dir_;
};

TEST_F(GitRepo, RevisionIsTheNewestCommitTheVersionsName) {
  write("a.cc", "int f() { return 1; }\n");
  const std::string first = commit("first");
  setenv("GIT_COMMITTER_DATE", "@4000000000 +0000", 1);  // later than `first` for sure
  git({"commit", "-q", "--allow-empty", "-m", "later"});
  unsetenv("GIT_COMMITTER_DATE");
  SubprocessResult head = runSubprocess({"git", "-C", dir_, "rev-parse", "HEAD"});
  std::string second = head.out.substr(0, 40);
  DeployedSource src;
  // "1.4.2" is not a commit; the short hash is; the unknown hash is ignored.
  EXPECT_EQ(src.revisionFor(path("a.cc"), {"1.4.2", first.substr(0, 10), "deadbeefdeadbeef"}, ""),
            first);
  EXPECT_EQ(src.revisionFor(path("a.cc"), {first, second}, ""), second);
  EXPECT_EQ(src.revisionFor(path("a.cc"), {"1.4.2"}, ""), "");
  EXPECT_EQ(src.revisionFor(path("a.cc"), {first}, "none"), "");
  EXPECT_EQ(src.revisionFor(path("a.cc"), {}, "HEAD"), second);
}

TEST_F(GitRepo, TextAtARevisionAndFilesItDoesNotHave) {
  write("a.cc", "int f() { return 1; }\n");
  const std::string rev = commit("first");
  write("a.cc", "int f() { return 2; }\n");
  DeployedSource src;
  const Result<std::string> text = src.textAt(path("a.cc"), rev);
  ASSERT_TRUE(text) << text.error;
  EXPECT_EQ(text.value, "int f() { return 1; }\n");
  const Result<std::string> added = src.textAt(path("new.cc"), rev);
  EXPECT_FALSE(added);
  EXPECT_NE(added.error, "");
  EXPECT_EQ(src.textAt("/tmp/perfhat-surely-not-a-repo/x.cc", rev).error,
            "not in a git repository");
}

TEST(DeployedSourceOutsideGit, NoRevision) {
  DeployedSource src;
  EXPECT_EQ(src.revisionFor("/proc/self/x.cc", {"0123456789abcdef"}, ""), "");
}

// The deployed text of the analyzer tests, and the text after an edit that takes the call out of
// the loop.
constexpr const char* kDeployed = R"src(
int slow(int x);
int keep(int x) { return slow(x); }
int work(int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) s += slow(i);
  return s;
}
)src";
constexpr const char* kEdited = R"src(
int slow(int x);
int keep(int x) { return slow(x); }
int work(int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) s += i;
  return s;
}
)src";

// Production data of kDeployed at `rev`: slow() 1 ms, called 20 times a call of work().
std::shared_ptr<analysis::InMemoryFeedback> deployedFeedback(const std::string& rev) {
  auto data = std::make_shared<analysis::InMemoryFeedback>();
  auto fn = [&](const std::string& key, double mean) {
    FeedbackItem it;
    it.key = key;
    Stats s;
    s.count = 100;
    s.mean_ns = s.p50_ns = mean;
    s.p90_ns = s.p99_ns = mean;
    it.stats = s;
    it.versions = {rev};
    return it;
  };
  FeedbackItem slow = fn("slow(int)", 1e6);
  CallSiteStats site;
  site.caller = "work(int)";
  site.count = 100;
  site.mean_ns = site.p50_ns = 1e6;
  site.calls_per_parent = 20;
  slow.callsites = {site};
  data->add(slow);
  data->add(fn("keep(int)", 1e6));
  data->add(fn("work(int)", 21e6));
  return data;
}

const analysis::FunctionInfo* function(const analysis::Snapshot& snap, const std::string& key) {
  for (const auto& f : snap.functions)
    if (f.key == key) return &f;
  return nullptr;
}

// The whole path as the server runs it: the feedback names the deployed commit; an unchanged
// function is measured as is, a changed one loses the call that is gone.
TEST_F(GitRepo, AnalyzerComparesTheDocumentWithWhatProductionRan) {
  write("a.cc", kDeployed);
  const std::string rev = commit("deployed");
  auto data = deployedFeedback(rev);
  ClangAnalyzer analyzer;
  Config cfg;
  analyzer.configure(cfg, dir_);
  std::vector<std::string> warnings;
  AnalysisInput in{path("a.cc"), kEdited, 1};
  analysis::SnapshotPtr snap = analyzer.analyze(
      in, [&](const std::vector<std::string>&) { return data; }, warnings);
  const analysis::FunctionInfo* keep = function(*snap, "keep(int)");
  const analysis::FunctionInfo* work = function(*snap, "work(int)");
  ASSERT_NE(keep, nullptr);
  ASSERT_NE(work, nullptr);
  EXPECT_EQ(keep->deployed, analysis::DeployedBody::Identical);
  EXPECT_EQ(keep->deployed_revision, rev);
  EXPECT_EQ(work->deployed, analysis::DeployedBody::Changed);
  EXPECT_NEAR(work->root().estimate.dist.mean_ns, 1e6, 1);  // 21 ms − 20 × 1 ms
  EXPECT_EQ(analyzer.deployedParses(), 1u);
}

// A document opened as production ran it (the usual case: a file not edited yet) is its own
// deployed text: libclang does not parse it a second time, and the edits after it are compared
// with that walk exactly as with a parse of the deployed text.
TEST_F(GitRepo, ADocumentOpenedAsDeployedServesAsTheDeployedText) {
  write("a.cc", kDeployed);
  const std::string rev = commit("deployed");
  auto data = deployedFeedback(rev);
  auto fetch = [&](const std::vector<std::string>&) { return data; };
  ClangAnalyzer analyzer;
  Config cfg;
  analyzer.configure(cfg, dir_);
  std::vector<std::string> warnings;
  analysis::SnapshotPtr opened = analyzer.analyze({path("a.cc"), kDeployed, 1}, fetch, warnings);
  for (const char* key : {"keep(int)", "work(int)"}) {
    const analysis::FunctionInfo* f = function(*opened, key);
    ASSERT_NE(f, nullptr) << key;
    EXPECT_EQ(f->deployed, analysis::DeployedBody::Identical) << key;
  }
  EXPECT_EQ(analyzer.deployedParses(), 0u);

  analysis::SnapshotPtr edited = analyzer.analyze({path("a.cc"), kEdited, 2}, fetch, warnings);
  const analysis::FunctionInfo* work = function(*edited, "work(int)");
  ASSERT_NE(work, nullptr);
  EXPECT_EQ(work->deployed, analysis::DeployedBody::Changed);
  EXPECT_NEAR(work->root().estimate.dist.mean_ns, 1e6, 1);  // 21 ms − 20 × 1 ms
  EXPECT_EQ(analyzer.deployedParses(), 0u);
}

}  // namespace
}  // namespace perfhat::server
