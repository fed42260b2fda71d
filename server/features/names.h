// The words for the analysis snapshot's enums and facts: the one place a model, a match kind or
// a source fact becomes text (hover, diagnostics, inlay hint tooltips, the --match-report field).
#pragma once

#include <string>
#include <string_view>

#include "server/analysis/snapshot.h"

namespace perfhat::features {

// "callsite-regression", "loop", …; "" for Model::Unstated.
std::string_view modelName(analysis::Model m);
// "exact", "file-line", …; "" for MatchKind::None (the --match-report field).
std::string_view matchKindName(analysis::MatchKind k);
// How the hover says it: "exact key", "definition file and line", …; "" for None.
std::string_view matchKindText(analysis::MatchKind k);
// "pointer heuristic: non-null", "negated …", "… (the else arm)", several joined by " + "; a
// short circuit's as "short circuit: the right operand of && runs when the left holds (…)".
std::string branchPriorText(const analysis::BranchPrior& p);
// "kCount = 16", "sizeof(a) / sizeof(a[0]) = 8", "range over int[8]: 8 elements"; "" for none.
std::string tripCountSourceText(const analysis::TripCountSource& s);
// "The body of work in a.cc has changed since production ran it (0123456789ab): its measured
// values describe the old body."
std::string changedBodyText(const analysis::CallFacts::ChangedBody& c);
// A function's name as the editor shows it: "~Widget (implicit)" for a member the compiler
// generated (FunctionInfo::implicit), else the name as written.
std::string functionName(const std::string& name, bool implicit);
std::string functionName(const analysis::FunctionInfo& f);
// How the editor words a call of a function named `name`: "name()". Every text naming a call
// (hover, derivation, diagnostics, hints) goes through it.
std::string callText(std::string_view name);
// A call named by a derivation fact: callText(name), or its key when it has no name; "" when it
// has neither (not a call).
std::string callText(const analysis::fact::CallName& c);
// What a parse problem's diagnostic says: libclang's words (with the included file or the
// command line they came from), the walk's truncation, or the step that failed.
std::string problemText(const analysis::ParseProblem& p);

}  // namespace perfhat::features
