// --feedback-file: an offline dataset in the batchGet response format (common/feedback.h).
//
// A missing or corrupt file is not fatal: load() reports a clear error, the source answers
// every request with "no data" (BadResponse + the error), and the server keeps serving.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>

#include "server/feedback/source.h"

#include "common/thread_annotations.h"

namespace perfhat::feedback {

class FileSource : public FeedbackSource {
 public:
  explicit FileSource(std::string path);

  // (Re)reads the file. Returns the error message, or nullopt on success. On error the
  // previously loaded data (if any) is kept.
  std::optional<std::string> load();
  // Loads from a string (the same format), for tests and fuzzing.
  std::optional<std::string> loadText(std::string_view text);

  FetchResult batchGet(const std::vector<std::string>& keys) override;
  ChangesResult changes(const std::string& cursor) override;
  std::string describe() const override { return "file " + path_; }

  size_t size() const;
  const std::optional<std::string>& lastError() const { return error_; }

 private:
  std::string path_;
  mutable Mutex mu_;
  std::vector<FeedbackItem> items_ GUARDED_BY(mu_);
  std::unordered_map<std::string, size_t> by_key_ GUARDED_BY(mu_);        // canonical, mangled
  std::unordered_multimap<std::string, size_t> by_name_ GUARDED_BY(mu_);  // qualified name
  std::optional<std::string> error_ GUARDED_BY(mu_);
  uint64_t generation_ GUARDED_BY(mu_) = 0;  // bumped on every successful load: the cursor
};

}  // namespace perfhat::feedback
