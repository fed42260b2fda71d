// The feedback source a configuration asks for: the handler when a URL is set (it wins), else
// the dataset file, else none. Used by the server and by `--check`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "server/feedback/file_source.h"
#include "server/feedback/provider.h"
#include "server/feedback/source.h"
#include "server/server/config.h"
#include "server/server/log.h"

namespace perfhat::server {

struct SourceChoice {
  std::shared_ptr<feedback::FeedbackSource> source;  // null: no production data configured
  std::shared_ptr<feedback::FileSource> file;        // set when the source is a dataset file
  std::vector<std::string> problems;                 // bad URL, missing/corrupt file (non-fatal)
  std::string loaded;                                // "loaded N items from F" for the log
};

SourceChoice makeSource(const Config& cfg);

// For a one-shot run (`--check`): the choice's problems go to the log, and its source comes
// wrapped in a provider with the configured cache; null when no production data is configured.
std::shared_ptr<feedback::FeedbackProvider> makeProvider(const SourceChoice& choice,
                                                         const Config& cfg, Logger& log);

}  // namespace perfhat::server
