// Reading an input file whole, refusing anything larger than the caller's bound (a wrong path to
// a core dump or a disk image must give an error, not exhaust memory).
#pragma once

#include <cstddef>
#include <string>

namespace perfhat::plan {

// Fills `out` and returns true, or sets `error` ("cannot open …", "… is larger than N bytes").
bool readBoundedFile(const std::string& path, std::size_t max_bytes, std::string& out,
                     std::string& error);

}  // namespace perfhat::plan
