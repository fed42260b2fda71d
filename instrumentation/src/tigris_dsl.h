// TigrisDSL (Mertz 2021, Listing 3.1): relevance filters such as
//   (more frequent ∪ most expensive) ∩ least changeable
// Decisions (DESIGN §10): equal precedence, left-associative; operators ∪ U union, ∩ ^ intersect,
// \ - minus; criteria spelled usagepattern or usage-pattern; keywords case-insensitive.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace perfhat::tigris {

enum class Criterion {
  kFrequent,
  kMaintainable,
  kExpensive,
  kChangeable,
  kErrorProne,
  kUsagePattern,
  kStateVariation,
  kConcurrent,
  kLatent,
};
inline constexpr int kCriterionCount = 9;
// None = the bare criterion ("average" group).
enum class Modifier { kNone, kMore, kLess, kMost, kLeast };
enum class Op { kUnion, kIntersect, kMinus };

std::string_view to_string(Criterion c);  // canonical DSL spelling, e.g. "usage-pattern"
std::string_view to_string(Modifier m);   // "" for kNone
std::string_view to_string(Op o);         // "∪", "∩", "\"
std::optional<Criterion> criterion_from_string(std::string_view s);

struct Node {
  enum class Kind { kLeaf, kBinary } kind = Kind::kLeaf;
  // Leaf
  Modifier modifier = Modifier::kNone;
  Criterion criterion = Criterion::kFrequent;
  // Binary
  Op op = Op::kUnion;
  std::unique_ptr<Node> lhs, rhs;
  size_t offset = 0;  // byte offset in the source, for messages
};

struct ParseError {
  size_t offset = 0;  // byte offset of the offending token
  size_t column = 1;  // 1-based column in code points (∪ counts as one)
  std::string message;
  std::string to_string() const;  // "column 7: expected a criterion after 'more', found ')'"
};

struct ParseResult {
  std::unique_ptr<Node> root;  // null on error
  std::optional<ParseError> error;
  explicit operator bool() const { return root != nullptr; }
};

// Parses a whole filter. Empty / whitespace-only input is an error (callers treat an empty
// PERFHAT_FILTER as "every probe relevant" before calling this).
ParseResult parse(std::string_view text);

// Canonical fully parenthesised rendering, e.g. "((more frequent ∪ most expensive) ∩ least
// changeable)". parse(print(x)) == x.
std::string print(const Node& n);

// Bitmask of criteria used by the expression (bit = 1 << int(Criterion)).
unsigned criteria_used(const Node& n);

}  // namespace perfhat::tigris
