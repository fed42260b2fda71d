// Reading an input file whole, refusing anything larger than the caller's bound (a wrong path to
// a core dump or a disk image must give an error, not exhaust memory).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace perfhat::plan {

// Fills `out` and returns true, or sets `error` ("cannot open …", "… is larger than N bytes").
bool readBoundedFile(const std::string& path, std::size_t max_bytes, std::string& out,
                     std::string& error);

// `parse` of the file's text, or, when the file cannot be read, an empty result of `parse`'s type
// whose `error` says why (the units, classes and frequency-profile files read this way).
template <class Parse>
auto parseBoundedFile(const std::string& path, std::size_t max_bytes, Parse parse)
    -> decltype(parse(std::string_view())) {
  std::string text, error;
  if (!readBoundedFile(path, max_bytes, text, error)) {
    decltype(parse(std::string_view())) unread;
    unread.error = error;
    return unread;
  }
  return parse(text);
}

}  // namespace perfhat::plan
