// The loop annotation `// perfhat: iterations=N`: one grammar, read by the analysis (a loop's
// stated trip count), the "Set expected iterations…" code action and the server's
// perfhat.setIterations command (both replace an existing annotation instead of adding one).
//
// Grammar, over one line of source (without its line break):
//   line        := any* "//" any* "perfhat:" ws* "iterations" ws* "=" ws* number any*
//   number      := digit+ ("." digit+)? (("e" | "E") digit+)?
//   ws          := " " | "\t" | "\v" | "\f" | "\r" | "\n"
// * The annotation may follow code on the loop's own line; on the line above it must be alone
//   (only spaces and tabs before the `//`), so it is not another statement's comment.
// * Text after the number is ignored (`iterations=20 rows per page` reads 20; `5.x` reads 5).
// * No sign, no leading `.`, no hex: such a value, or one too large for a double (`1e999`), is
//   not an annotation.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace perfhat::analysis {

struct IterationsAnnotation {
  double iterations = 0;  // finite, ≥ 0
  bool alone = false;     // nothing but spaces/tabs before the `//`: may annotate the line below
};

std::optional<IterationsAnnotation> parseIterationsAnnotation(std::string_view line);

// The annotation's canonical spelling, as the code action and the command write it.
std::string iterationsAnnotationText(long iterations);

}  // namespace perfhat::analysis
