// Fuzz target: the features over arbitrary document text. The snapshot (the T4 fixture) does not
// match the text, as after an edit the analysis has not caught up with yet: positions past the
// end of lines or of the file, tabs, CRLF and broken UTF-8 must never crash annotateSource() or
// the text-aware code actions.
#include <cstddef>
#include <cstdint>
#include <string>

#include "server/features/annotate.h"
#include "server/features/features.h"
#include "server/features/test_snapshot.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace perfhat::features;
  static const testing::T4 t4;
  const std::string text(reinterpret_cast<const char*>(data), size);
  Options o;
  o.hotspot_diagnostics = true;
  (void)annotateSource(text, t4.snapshot, o, size % 2 == 0);
  for (int line = 0; line < 12; ++line) {
    (void)codeActions(t4.snapshot, {{line, 4}, {line, 4}}, o, text);
  }
  return 0;
}
