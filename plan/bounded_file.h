// Reading an input file whole, refusing anything larger than the caller's bound (a wrong path to
// a core dump or a disk image must give an error, not exhaust memory).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/result.h"

namespace perfhat::plan {

// The file's text, or why there is none ("cannot open …", "… is larger than N bytes").
Result<std::string> readBoundedFile(const std::string& path, std::size_t max_bytes);

// `parse` of the file's text, or, when the file cannot be read, an empty result of `parse`'s type
// whose `error` says why (the units, classes and frequency-profile files read this way).
template <class Parse>
auto parseBoundedFile(const std::string& path, std::size_t max_bytes, Parse parse)
    -> decltype(parse(std::string_view())) {
  const Result<std::string> text = readBoundedFile(path, max_bytes);
  if (!text) {
    decltype(parse(std::string_view())) unread;
    unread.error = text.error;
    return unread;
  }
  return parse(text.value);
}

}  // namespace perfhat::plan
