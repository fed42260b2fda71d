// The presentation layer: feature results (server/features/features.h, byte positions) as LSP
// protocol types (positions in the client's encoding). It sits between the features and the
// protocol so that server/lsp knows no feature. The position conversion is passed in so this
// layer does not depend on the document store.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "server/features/features.h"
#include "server/lsp/protocol.h"

namespace perfhat::presentation {

using namespace perfhat::lsp;  // the protocol types every render() returns

using ToLsp = std::function<Position(const analysis::Position&)>;

InlayHint render(const features::InlayHint& h, const ToLsp& conv);
Hover render(const features::HoverResult& h, const ToLsp& conv, bool markdown);
CodeLens render(const features::CodeLens& l, const ToLsp& conv);
Diagnostic render(const features::Diagnostic& d, const ToLsp& conv);
CodeAction render(const features::CodeAction& a, const std::string& uri, const ToLsp& conv);
Range render(const analysis::Range& r, const ToLsp& conv);

}  // namespace perfhat::presentation
