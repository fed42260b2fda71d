// clangd TestTU-style helper: a tiny translation unit parsed from memory (the main file is an
// unsaved file), optional headers written to a private temporary directory (the workspace root
// of the test), then built into a ParsedUnit / analysed into a Snapshot.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "server/analysis/analyze.h"

namespace perfhat::analysis::testing {

struct TestTU {
  std::string code;
  std::string filename = "main.cc";
  std::map<std::string, std::string> headers;  // relative path → contents
  std::vector<std::string> extra_args;
  AnalysisOptions options;

  // Parses (once per call). The temporary directory lives as long as the returned object.
  struct Built {
    std::string dir;
    std::unique_ptr<TranslationUnit> tu;
    ParsedUnit unit;
    ~Built();
  };
  std::unique_ptr<Built> build() const;
  SnapshotPtr analyze(const FeedbackView& feedback) const;
};

// The function whose key is `key` in the snapshot/unit, or nullptr.
const FunctionInfo* findFunction(const Snapshot& s, const std::string& key);
const FunctionInfo* findFunction(const ParsedUnit& u, const std::string& key);
// Nodes of a kind in pre-order.
std::vector<const Node*> nodesOfKind(const FunctionInfo& f, NodeKind kind);
// The keys of the unit's functions as written (implicit members left out).
std::vector<std::string> keysOf(const ParsedUnit& u);
// The first call node of `f` in pre-order, or nullptr.
const Node* firstCall(const FunctionInfo& f);

// Production data for a test's feedback view: a function measured `count` times with this p50
// (its mean too) and tail, and a call site of it in `caller` (1,000 calls).
FeedbackItem measuredItem(const std::string& key, double p50_ns, double p90_ns, double p99_ns,
                          uint64_t count);
CallSiteStats callSite(const std::string& caller, double mean_ns, double calls_per_parent,
                       double p90_ns = 0);

// Production data of a function that ran `count` times, every one from `caller` (once per call
// of the caller), each percentile at `mean_ns`: what a call resolved at run time (a virtual or
// indirect call) is estimated from.
FeedbackItem ranFrom(const std::string& key, double mean_ns, uint64_t count,
                     const std::string& caller);

}  // namespace perfhat::analysis::testing
