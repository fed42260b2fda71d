// The `perfhat-lsp --check` view: the document with what the editor would show, as plain text.
//   * code lenses on their own line above the line they belong to (the function's name),
//   * each line followed by its inlay hints (same labels as textDocument/inlayHint; when a line
//     has several, calls are prefixed with their name so each figure can be told apart),
//   * diagnostics below the line they point at, underlined with carets.
#pragma once

#include <string>

#include "server/features/features.h"

namespace perfhat::features {

// `color` adds ANSI colours (measured cyan, predicted yellow, unknown grey, warnings yellow,
// errors red) for a terminal; without it the output is stable text for golden tests and pipes.
std::string annotateSource(const std::string& text, const Snapshot& s, const Options& o,
                           bool color);

}  // namespace perfhat::features
