// Every XRay function's entry address by id, in one pass over the program's sled map: compiler-rt
// 14's __xray_function_address scans the map from its start for each id when the program has no
// function index (clang 14 emits none here), about 7,500 instructions a function on googletest's
// samples, paid at each function's first call (0.6 M instructions a process).
//
// The sled map's layout is compiler-rt's (XRaySledEntry, version 2: addresses relative to the
// entry's own fields), and ids count the distinct functions in map order, as the runtime's
// look-up does. Only version-2 maps are read, and the result is checked against the runtime's
// own answer for the first and last ids and its function count; otherwise nullptr (the caller
// asks the runtime per function, as before).
#include <cstddef>
#include <cstdint>
#include <new>

#include "xray_interface.h"

// Bounds of the section, defined by the linker when the program has sleds.
extern "C" const char __start_xray_instr_map[] __attribute__((weak));
extern "C" const char __stop_xray_instr_map[] __attribute__((weak));

namespace perfhat::autoinstrument {
namespace {

struct SledEntry {  // compiler-rt's XRaySledEntry on 64-bit targets
  uint64_t address;
  uint64_t function;
  unsigned char kind;
  unsigned char always_instrument;
  unsigned char version;
  unsigned char padding[13];
};
static_assert(sizeof(SledEntry) == 32);

PERFHAT_XRAY_NOINSTR uintptr_t function_of(const SledEntry& s) {
  return reinterpret_cast<uintptr_t>(&s.function) + s.function;
}

}  // namespace

PERFHAT_XRAY_NOINSTR const uintptr_t* xray_function_addresses(size_t max_fid) {
  if (max_fid == 0 || __start_xray_instr_map == nullptr || __stop_xray_instr_map == nullptr)
    return nullptr;
  const auto* begin = reinterpret_cast<const SledEntry*>(__start_xray_instr_map);
  const auto* end = reinterpret_cast<const SledEntry*>(__stop_xray_instr_map);
  if (end <= begin) return nullptr;
  auto* out = new (std::nothrow) uintptr_t[max_fid + 1]();
  if (out == nullptr) return nullptr;
  size_t fid = 0;
  uintptr_t last = 0;
  bool ok = true;
  for (const SledEntry* s = begin; s != end && ok; ++s) {
    if (s->version != 2) ok = false;
    const uintptr_t fn = function_of(*s);
    if (fn == last) continue;
    last = fn;
    if (++fid > max_fid) ok = false;
    if (ok) out[fid] = fn;
  }
  const auto last_fid = static_cast<int32_t>(max_fid);
  if (!ok || fid != max_fid || out[1] != __xray_function_address(1) ||
      out[max_fid] != __xray_function_address(last_fid)) {
    delete[] out;
    return nullptr;
  }
  return out;
}

}  // namespace perfhat::autoinstrument
