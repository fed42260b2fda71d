#include "server/server/sources.h"

#include <algorithm>

#include "server/feedback/http_source.h"

namespace perfhat::server {

SourceChoice makeSource(const Config& cfg) {
  SourceChoice c;
  if (!cfg.handler_url.empty()) {
    try {
      c.source = std::make_shared<feedback::HttpSource>(
          cfg.handler_url,
          feedback::HttpOptions{cfg.token, cfg.connect_timeout_ms, cfg.read_timeout_ms, true,
                                cfg.total_timeout_ms,
                                static_cast<size_t>(std::max(cfg.max_response_mb, 1)) << 20});
    } catch (const std::exception& e) {
      c.problems.push_back(std::string("feedback handler: ") + e.what());
    }
    return c;
  }
  if (!cfg.feedback_file.empty()) {
    c.file = std::make_shared<feedback::FileSource>(cfg.feedback_file);
    if (auto err = c.file->load()) {
      c.problems.push_back(*err + "; continuing without production data");
    } else {
      c.loaded =
          "loaded " + std::to_string(c.file->size()) + " feedback items from " + cfg.feedback_file;
    }
    c.source = c.file;
  }
  return c;
}

std::shared_ptr<feedback::FeedbackProvider> makeProvider(const SourceChoice& choice,
                                                         const Config& cfg, Logger& log) {
  for (const auto& p : choice.problems) log.warn(p);
  if (!choice.source) return nullptr;
  return std::make_shared<feedback::FeedbackProvider>(choice.source, cfg.cache);
}

}  // namespace perfhat::server
