// What the background indexer reports to the server, which turns it into `$/progress`.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace perfhat::server {

struct IndexEvent {
  enum class Kind { Begin, Report, End } kind = Kind::Begin;
  size_t done = 0;
  size_t total = 0;
  std::string message;  // Begin: a note on the index file; Report: the file; End: the summary
};
using IndexProgressSink = std::function<void(const IndexEvent&)>;

}  // namespace perfhat::server
