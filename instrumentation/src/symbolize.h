// Address -> symbol resolution off the hot path: dladdr for exported symbols, else the ELF
// .symtab of the containing object (executables rarely export their functions). PIE-aware: the
// lookup uses the offset from the object's load base for ET_DYN objects.
#pragma once

#include <string>

namespace perfhat::symbolize {

struct Symbol {
  std::string mangled;    // as `nm` shows it; empty if not found
  std::string demangled;  // abi::__cxa_demangle, or = mangled for C symbols
  const void* start = nullptr;
};

Symbol resolve(const void* addr);
std::string demangle(const std::string& mangled);

}  // namespace perfhat::symbolize
