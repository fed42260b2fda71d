// Address -> symbol resolution off the hot path: dladdr for exported symbols, else the ELF
// .symtab of the containing object (executables rarely export their functions). PIE-aware: the
// lookup uses the offset from the object's load base for ET_DYN objects.
#pragma once

#include <string>
#include <vector>

namespace perfhat::symbolize {

struct Symbol {
  std::string mangled;    // as `nm` shows it; empty if not found
  std::string demangled;  // abi::__cxa_demangle, or = mangled for C symbols
  const void* start = nullptr;
};

Symbol resolve(const void* addr);
// resolve() of each address, in one pass over an object's symbol table for all the addresses in
// it (a process registering a carried selection's functions at start-up; resolve() scans the
// table once per address for its first lookups, then sorts it).
std::vector<Symbol> resolve_all(const std::vector<const void*>& addrs);
std::string demangle(const std::string& mangled);
// How many objects' symbol tables have been read so far (tests: a process that starts from a
// carried selection with names reads none).
size_t tables_read();

}  // namespace perfhat::symbolize
