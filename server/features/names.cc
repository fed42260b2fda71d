#include "server/features/names.h"

#include <cstdio>
#include <filesystem>
#include <functional>
#include <set>

namespace perfhat::features {

using analysis::BranchHeuristic;
using analysis::BranchPrior;
using analysis::MatchKind;
using analysis::Model;

std::string_view modelName(Model m) {
  switch (m) {
    case Model::Unstated:
      return "";
    case Model::None:
      return "none";
    case Model::Measured:
      return "measured";
    case Model::Leaf:
      return "leaf";
    case Model::CallsiteRegression:
      return "callsite-regression";
    case Model::CalleeOverall:
      return "callee-overall";
    case Model::WorkspaceBody:
      return "workspace-body";
    case Model::Loop:
      return "loop";
    case Model::Branch:
      return "branch";
    case Model::Sum:
      return "sum";
    case Model::Diff:
      return "diff";
  }
  return "";
}

std::string_view matchKindName(MatchKind k) {
  switch (k) {
    case MatchKind::None:
      return "";
    case MatchKind::Exact:
      return "exact";
    case MatchKind::Mangled:
      return "mangled";
    case MatchKind::Rule:
      return "rule";
    case MatchKind::Name:
      return "name";
    case MatchKind::Overloads:
      return "overloads";
    case MatchKind::FileLine:
      return "file-line";
    case MatchKind::Virtual:
      return "virtual";
  }
  return "";
}

std::string_view matchKindText(MatchKind k) {
  switch (k) {
    case MatchKind::None:
      return "";
    case MatchKind::Exact:
      return "exact key";
    case MatchKind::Mangled:
      return "mangled name";
    case MatchKind::Name:
      return "qualified name (single overload)";
    case MatchKind::Overloads:
      return "qualified name, aggregated across overloads";
    case MatchKind::FileLine:
      return "definition file and line";
    case MatchKind::Rule:
      return "project rule (.perfhat.json)";
    case MatchKind::Virtual:
      return "implementations called from here (call-site data)";
  }
  return "";
}

namespace {

std::string_view heuristicText(BranchHeuristic h) {
  switch (h) {
    case BranchHeuristic::PointerNonNull:
      return "pointer heuristic: non-null";
    case BranchHeuristic::PointerNonEmpty:
      return "pointer heuristic: non-empty handle";
    case BranchHeuristic::PointerEqual:
      return "pointer heuristic: p == q unlikely";
    case BranchHeuristic::PointerNotEqual:
      return "pointer heuristic: p != q likely";
    case BranchHeuristic::FloatEqual:
      return "float heuristic: x == y unlikely";
    case BranchHeuristic::OpcodeEqual:
      return "opcode heuristic: x == C unlikely";
    case BranchHeuristic::OpcodeNotEqual:
      return "opcode heuristic: x != C likely";
    case BranchHeuristic::OpcodeNegative:
      return "opcode heuristic: x < 0 unlikely";
    case BranchHeuristic::ZeroNonZero:
      return "zero heuristic: x != 0 likely";
    case BranchHeuristic::ErrorThrows:
      return "error heuristic: an arm that throws, 4:124";
    case BranchHeuristic::ReturnEarly:
      return "return heuristic: an arm that returns early, 28 %";
    case BranchHeuristic::LoopExit:
      return "loop exit heuristic: an arm that breaks out, 20 %";
  }
  return "";
}

// An expression's tokens joined in the usual style (`sizeof(a) / sizeof(a[0])`,
// `std::size(kNames)`), cut with " …" once past 80 characters: a hover shows it on one line.
std::string expressionText(const analysis::TripCountSource::Evaluated& e) {
  static const std::set<std::string, std::less<>> kTight = {"(",  ")", "[",  "]",
                                                            "::", ".", "->", ","};
  const auto opens = [](std::string_view t) {
    return t == "(" || t == "[" || t == "::" || t == "." || t == "->" || t == ",";
  };
  std::string out, prev;
  for (const std::string& t : e.tokens) {
    if (out.size() > 80) return out + " …";
    const bool tight = out.empty() || kTight.count(t) || opens(prev) || (t == "(" && !prev.empty());
    if (!tight) out += ' ';
    out += t;
    if (t == ",") out += ' ';
    prev = t;
  }
  return e.cut ? out + " …" : out;
}

}  // namespace

std::string branchPriorText(const BranchPrior& p) {
  std::string matched;
  for (const analysis::HeuristicMatch& m : p.heuristics) {
    if (!matched.empty()) matched += " + ";
    if (m.negated) matched += "negated ";
    matched += heuristicText(m.heuristic);
    if (m.else_arm) matched += " (the else arm)";
  }
  if (p.short_circuit == BranchPrior::ShortCircuit::None) return matched;
  const std::string how = p.short_circuit == BranchPrior::ShortCircuit::And
                              ? "short circuit: the right operand of && runs when the left holds"
                              : "short circuit: the right operand of || runs when the left fails";
  return how + (matched.empty() ? " (no heuristic for the left: even odds)" : " (" + matched + ")");
}

std::string tripCountSourceText(const analysis::TripCountSource& s) {
  if (s.array)
    return "range over " + s.array->type + ": " + std::to_string(s.array->extent) + " elements";
  std::string text;
  for (const analysis::TripCountSource::Evaluated& e : s.evaluated) {
    char value[32];
    std::snprintf(value, sizeof value, "%.0f", e.value);
    text += (text.empty() ? "" : ", ") + expressionText(e) + " = " + value;
  }
  return text;
}

std::string changedBodyText(const analysis::CallFacts::ChangedBody& c) {
  return "The body of " + c.name + " in " + std::filesystem::path(c.file).filename().string() +
         " has changed since production ran it (" + c.revision.substr(0, 12) +
         "): its measured values describe the old body.";
}

std::string functionName(const std::string& name, bool implicit) {
  return implicit ? name + " (implicit)" : name;
}

std::string functionName(const analysis::FunctionInfo& f) {
  return functionName(f.name, f.implicit);
}

std::string callText(std::string_view name) { return std::string(name) + "()"; }

std::string callText(const analysis::fact::CallName& c) {
  return c.name.empty() ? c.key : callText(c.name);
}

std::string problemText(const analysis::ParseProblem& p) {
  if (p.truncated) {
    return "analysis truncated at nesting depth " + std::to_string(p.truncated->depth) + " in " +
           p.truncated->function + ": code nested deeper has no hints and its cost is unknown";
  }
  using Origin = analysis::ParseProblem::Origin;
  switch (p.origin) {
    case Origin::Document:
      return p.message;
    case Origin::IncludedFile:
      return p.file + ":" + std::to_string(p.line) + ": " + p.message;
    case Origin::CommandLine:
      return "(command line) " + p.message;
    case Origin::Parse:
      return "libclang could not parse the file: " + p.message;
    case Origin::Analysis:
      return "perfhat: analysis failed: " + p.message;
  }
  return p.message;
}

}  // namespace perfhat::features
