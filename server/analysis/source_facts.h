// What the walk reads from the source as written and the analysis carries as facts, never as
// words: the static heuristics behind a branch's prior (ast_branches.cc, ast_short_circuit.cc)
// and where a loop's constant trip count came from (ast_loops.cc). server/features/names.h
// says them.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace perfhat::analysis {

// A static heuristic for the `if` (or `?:`, or a short circuit's left operand) as Ball & Larus
// (PLDI 1993) name them; ast_walker.h gives their weights.
enum class BranchHeuristic {
  PointerNonNull,   // `if (p)`, `if (auto* p = find())`
  PointerNonEmpty,  // a class tested for truth: a smart pointer, an optional, an expected
  PointerEqual,     // `p == q`: unlikely
  PointerNotEqual,  // `p != q`: likely
  FloatEqual,       // `x == y` on floating point: unlikely
  OpcodeEqual,      // `x == C`: unlikely
  OpcodeNotEqual,   // `x != C`: likely
  OpcodeNegative,   // `x < 0`: unlikely
  ZeroNonZero,      // `if (x)` on an integer: likely
  ErrorThrows,      // an arm that throws: 4:124
  ReturnEarly,      // an arm that returns early: 28 %
  LoopExit,         // an arm that breaks out of the loop: 20 %
};

// One heuristic that matched, and how it was applied.
struct HeuristicMatch {
  BranchHeuristic heuristic = BranchHeuristic::PointerNonNull;
  bool negated = false;   // the condition is its operand under an odd number of `!`
  bool else_arm = false;  // an exit heuristic that matched the else arm (the then arm is likely)
  bool operator==(const HeuristicMatch&) const = default;
};

// Why arm 0 of a two-arm branch has its static prior: the heuristics combined, in the order they
// matched; for `a && f()` / `a || f()` (arm 0: the right operand) the operator, whose left
// operand's heuristics give the odds (even odds when none matched).
struct BranchPrior {
  enum class ShortCircuit { None, And, Or };
  ShortCircuit short_circuit = ShortCircuit::None;
  std::vector<HeuristicMatch> heuristics;
  bool operator==(const BranchPrior&) const = default;
};

// Where a loop's constant trip count came from when it is not a literal (shown in the hover).
struct TripCountSource {
  // A start or bound libclang evaluated: the expression's tokens as written (`kCount`;
  // `sizeof`, `(`, `a`, `)`, `/`, …; `std`, `::`, `size`, …) and its value. `cut`: tokens past
  // the walk's bound (Builder::kMaxExpressionText bytes) were left out.
  struct Evaluated {
    std::vector<std::string> tokens;
    double value = 0;
    bool cut = false;
    bool operator==(const Evaluated&) const = default;
  };
  std::vector<Evaluated> evaluated;  // the start, then the bound; literals are left out
  // A range-for over an array whose type fixes its size (`int[8]`, `std::array<T, 8>`): the type
  // as written and its extent.
  struct FixedArray {
    std::string type;
    long long extent = 0;
    bool operator==(const FixedArray&) const = default;
  };
  std::optional<FixedArray> array;
  bool empty() const { return evaluated.empty() && !array; }
  bool operator==(const TripCountSource&) const = default;
};

}  // namespace perfhat::analysis
