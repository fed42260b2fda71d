// The inference tests' shared parts (inference_test.cc, inference_call_sites_test.cc,
// inference_loops_test.cc, inference_branches_test.cc): feedback items and call sites built from
// a mean, and the changed-call input of a derivation. Durations in nanoseconds.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "server/analysis/analyze.h"
#include "server/analysis/inference.h"
#include "server/analysis/testing/test_tu.h"

namespace perfhat::analysis::inference_test {

using testing::findFunction;
using ::testing::HasSubstr;
using testing::nodesOfKind;
using testing::TestTU;

inline constexpr double kMs = 1e6;

inline FeedbackItem item(const std::string& key, double mean_ns, uint64_t count = 100) {
  FeedbackItem it;
  it.key = key;
  Stats s;
  s.count = count;
  s.mean_ns = mean_ns;
  s.p50_ns = mean_ns;
  s.p90_ns = 2 * mean_ns;
  s.p99_ns = 4 * mean_ns;
  it.stats = s;
  return it;
}

inline CallSiteStats site(const std::string& caller, double mean_ns, double rate,
                          uint64_t count = 100) {
  CallSiteStats c;
  c.caller = caller;
  c.count = count;
  c.mean_ns = mean_ns;
  c.caller_rate_per_s = rate;
  return c;
}

// The changed-call input of a call of `callee` ("new call f(): 10 × 2 ms"), or nullptr.
inline const fact::ChangedCall* changedCall(const analysis::Derivation& d, fact::CallChange change,
                                            const std::string& callee) {
  for (const fact::Input& in : d.inputs)
    if (const auto* c = std::get_if<fact::ChangedCall>(&in.fact))
      if (c->change == change && c->callee.name == callee) return c;
  return nullptr;
}

}  // namespace perfhat::analysis::inference_test
