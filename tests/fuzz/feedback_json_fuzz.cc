// Fuzzes what the language server parses from outside about feedback: the --feedback-file
// dataset / batchGet response, the handler's /v1/changes body, and the server settings
// (.perfhat.json, initializationOptions); and the handler's quick reader of batchGet key lists
// against the full parser.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/json_parse.h"
#include "server/feedback/file_source.h"
#include "server/feedback/http_source.h"
#include "server/feedback/provider.h"
#include "server/server/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace perfhat;
  auto source = std::make_shared<feedback::FileSource>("<fuzz>");
  if (!source->loadText(text)) {
    // Loaded: look every key up through the cache, by key and by name.
    feedback::ManualClock clock;
    feedback::FeedbackProvider provider(source, {16, std::chrono::seconds(60)}, clock);
    std::vector<std::string> keys = {"a()", "agile::Story::tasks() const"};
    auto all = source->batchGet({});
    for (const auto& it : all.response.items) keys.push_back(it.key);
    (void)provider.get(keys);
    (void)provider.get(keys);
  }
  try {
    (void)feedback::parseChangesResponse(text);
  } catch (const FeedbackFormatError&) {
  }
  // Nesting-limited as every parser of outside JSON (a 100,000-deep seed overflowed the stack in
  // the copy into the settings layers below).
  nlohmann::json j = parseJson(text).value;
  // The handler's quick reader of plain key lists accepts only what the full parser reads the
  // same way.
  std::vector<std::string> plain;
  if (parsePlainKeysRequest(text, plain)) {
    if (j.is_discarded() || j.get<BatchGetRequest>().keys != plain) __builtin_trap();
  }
  if (!j.is_discarded()) {
    server::ConfigLayers layers;
    layers.project = j;
    layers.client = server::clientSettings(j);
    std::vector<std::string> warnings;
    (void)layers.resolve(&warnings);
  }
  return 0;
}
