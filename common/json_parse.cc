#include "common/json_parse.h"

namespace perfhat {

JsonParse parseJson(std::string_view text, int max_depth) {
  using json = nlohmann::json;
  bool too_deep = false;
  // The callback sees each container start with the depth it opens; refusing it keeps the parser
  // from storing anything below (it still scans the rest of the text, iteratively).
  json::parser_callback_t limit = [&too_deep, max_depth](int depth, json::parse_event_t event,
                                                         json&) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        depth >= max_depth) {
      too_deep = true;
    }
    return !too_deep;
  };
  JsonParse out;
  try {
    out.value = json::parse(text.begin(), text.end(), limit, /*allow_exceptions=*/true);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e400
    out.value = json(json::value_t::discarded);
    out.error = std::string("not valid JSON: ") + e.what();
    return out;
  }
  if (too_deep) {
    out.value = json(json::value_t::discarded);
    out.error = "nested deeper than " + std::to_string(max_depth) + " levels";
  }
  return out;
}

}  // namespace perfhat
