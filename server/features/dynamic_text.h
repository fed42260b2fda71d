// The words of the call-graph features (dynamic.h): lens titles, the hover's callers/callees
// section and the never-called message, with the same number formatters as every feature.
#pragma once

#include <functional>
#include <string>

#include "server/features/dynamic.h"

namespace perfhat::features {

// "1.2M calls/h · self p50 40.0 µs · demand #3 · 7 callers / 2 callees"
std::string dynamicLensTitle(const DynamicLens& l);
// The lens as the editor shows it: clicking opens the call graph around the function.
CodeLens toCodeLens(const DynamicLens& l);

// A link target for a definition ("file:///src/a.cc#L12"); the server knows URIs.
using DefinitionLink = std::function<std::string(const DefinitionLocation&)>;
// "**Production callers** (2 of 7, last 24 h)" lists with counts; names are links to their
// definitions where the workspace has them. Plain text when `markdown` is false.
std::string dynamicHoverText(const DynamicHover& h, const DefinitionLink& link, bool markdown);

// Information diagnostic "perfhat.never-called".
Diagnostic toDiagnostic(const NeverCalled& n);

// "24 h", "7 d", "30 min".
std::string formatWindow(int64_t seconds);

inline constexpr const char* kShowCallGraphCommand = "perfhat.showCallGraph";

}  // namespace perfhat::features
