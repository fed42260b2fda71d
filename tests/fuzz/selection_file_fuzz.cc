// Fuzz target for the carried selection's file (selection_store.h, read by every XRay process
// with a Tigris filter from the user's cache directory). Invariants: no crash; a file believed
// for its key holds only ascending ids in [1, functions], as many as it says, a name (or none) for
// each, no name longer than the bound or with a space, and encodes back to exactly its own text.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "selection_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace perfhat::detail;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The key the corpus' files were written for.
  const SelectionKey key{"0fd90aa285071b0bb97cf6d686d23812d7a9e6c5", 0x734b7e49a8f35ce4, 333};
  std::string why;
  auto s = decode_selection(text, key, &why);
  if (!s) {
    if (why.empty()) std::abort();
    return 0;
  }
  uint32_t last = 0;
  for (uint32_t fid : s->functions) {
    if (fid <= last || fid > key.functions) std::abort();
    last = fid;
  }
  if (s->names.size() != s->functions.size()) std::abort();
  for (const std::string& name : s->names)
    if (name.size() > kMaxCarriedName || name.find(' ') != std::string::npos) std::abort();
  if (s->window_ns == 0 || encode_selection(key, *s) != text) std::abort();
  return 0;
}
