// The ONE normalizer for C++ function identity (DESIGN §3).
//
// The runtime reports a function as whatever it has: GCC/Clang `__PRETTY_FUNCTION__` text, a
// demangled symbol (`nm -C`, `abi::__cxa_demangle`), or an Itanium mangled name; the language
// server builds a spelling from libclang cursors. All of them go through normalizeFunctionKey()
// to the canonical key, e.g.
//   `agile::BacklogService::storyPoints(const agile::Story &) const`
// Rules (each exists because two real spellings of one function differed in it):
//   * no return type, no `virtual`/`static`, no ABI tags (`[abi:cxx11]`), no `noexcept`;
//   * cv on the left, `T *` / `T &` with one space, top-level const of parameters dropped;
//   * builtin spellings canonical (`long unsigned int` → `unsigned long`), the fixed-width
//     typedefs of LP64 Linux resolved (`uint64_t` → `unsigned long`, `size_t` likewise);
//   * standard library spelled as users write it: inline namespaces (`__cxx11`, `__1`) dropped,
//     default template arguments (allocators, comparators, hashers, traits) dropped,
//     `basic_string<char>` → `std::string`, `basic_string_view<char>` → `std::string_view`, …;
//   * `{anonymous}` → `(anonymous namespace)`;
//   * GCC/Clang `[with T = int]` substituted, giving the instantiation key
//     `ns::maxOf<int>(int, int)` that `nm -C` also yields;
//   * lambdas `enclosing-key::lambda#N` (N = 1-based ordinal in the enclosing function, as GCC
//     and Clang number them); spellings that carry no ordinal (`<lambda(int)>`,
//     `(anonymous class)::operator()`) give `enclosing-key::lambda`, which still matches by name.
// Text that cannot be parsed is returned with whitespace folded, never an exception: keys
// arrive from outside (spans, datasets) and a bad one must not stop anything.
#pragma once

#include <string>
#include <string_view>

namespace perfhat {

// Any spelling (pretty function, demangled, mangled `_Z…`, libclang-built) → canonical key.
std::string normalizeFunctionKey(std::string_view spelling);

// One type spelling → canonical form (used for parameter types and template arguments).
std::string normalizeTypeName(std::string_view type);

// `abi::__cxa_demangle`; returns "" when `mangled` is not a valid mangled name.
std::string demangle(std::string_view mangled);

// The overload-set name of a key: the part before the parameter list, with template argument
// lists removed (so instantiations aggregate) and a lambda's `#N` dropped.
//   `ns::maxOf<int>(int, int)` → `ns::maxOf`, `f(int)::lambda#2` → `f(int)::lambda`
std::string qualifiedName(std::string_view key);

// A member function key's last component with its parameters and qualifiers, the part every
// override of a virtual function shares: `ns::PosixEnv::NowMicros() const` → `NowMicros() const`.
// "" for a key without a scope. Used to find the implementations behind a virtual call.
std::string memberSignature(std::string_view key);

// Prefix of a batchGet key asking for every implementation of a virtual function: the handler
// answers `virtual:ns::Env::NowMicros()` with the stored keys of the same memberSignature.
inline constexpr std::string_view kVirtualKeyPrefix = "virtual:";

// True when `s` looks like an Itanium mangled name.
bool isMangledName(std::string_view s);

}  // namespace perfhat
