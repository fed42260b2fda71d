// SARIF 2.1.0 output of `perfhat-lsp --check` (issue #25), for code-review tools: one result per
// diagnostic, its rule the diagnostic's code, locations as file URIs with 1-based lines and
// columns (columns count UTF-8 bytes; `columnKind` says so).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/features/features.h"

namespace perfhat::server {

struct SarifFile {
  std::string path;  // absolute
  std::vector<features::Diagnostic> diagnostics;
};

nlohmann::json toSarif(const std::vector<SarifFile>& files, const std::string& version);

}  // namespace perfhat::server
