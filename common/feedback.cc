#include "common/feedback.h"

#include <type_traits>

#include <nlohmann/json.hpp>

#include "common/feedback_fields.h"
#include "common/json_number.h"
#include "common/json_parse.h"

namespace perfhat {
namespace {

using nlohmann::json;

// A field's value; a wrong type or an integer out of range throws, naming the field.
template <typename T>
T fieldValue(const json& v, const char* name) {
  try {
    return valueFrom<T>(v);
  } catch (const json::type_error& e) {
    throw FeedbackFormatError(std::string("\"") + name + "\": " + e.what());
  }
}

// Reads an optional field: absent or null leaves `out` unchanged.
template <typename T>
void readOpt(const json& j, const char* name, T& out) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return;
  out = fieldValue<T>(*it, name);
}

template <typename T>
void readOpt(const json& j, const char* name, std::optional<T>& out) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return;
  out = fieldValue<T>(*it, name);
}

void requireObject(const json& j, const char* what) {
  if (!j.is_object()) throw FeedbackFormatError(std::string(what) + " must be a JSON object");
}

template <typename T>
T parseDocument(std::string_view text, const char* what) {
  // Nesting-limited (common/json_parse.h): from_json copies values, which recurses per level.
  JsonParse parsed = parseJson(text);
  if (!parsed.ok()) throw FeedbackFormatError(std::string(what) + ": " + parsed.error);
  const json& j = parsed.value;
  try {
    return j.get<T>();
  } catch (const FeedbackFormatError&) {
    throw;
  } catch (const json::exception& e) {
    throw FeedbackFormatError(std::string(what) + ": " + e.what());
  }
}

// A json object of the fields describe() (common/feedback_fields.h) names.
class JsonFields {
 public:
  explicit JsonFields(json& j) : j_(j) {}
  template <typename T>
  void field(const char* name, const T& v) {
    j_[name] = v;
  }
  template <typename T>
  void object(const char* name, const T& v) {
    j_[name] = described(v);
  }
  template <typename T>
  void list(const char* name, const std::vector<T>& v) {
    json a = json::array();
    for (const T& e : v) {
      if constexpr (std::is_same_v<T, std::string>) {
        a.push_back(e);
      } else {
        a.push_back(described(e));
      }
    }
    j_[name] = std::move(a);
  }

  template <typename T>
  static json described(const T& v) {
    json j = json::object();
    JsonFields out(j);
    describe(v, out);
    return j;
  }

 private:
  json& j_;
};

template <typename T>
json described(const T& v) {
  return JsonFields::described(v);
}

// Reads the fields describe() names from a JSON object `what`, each optional (absent or null
// leaves the value as it is), in any order.
class JsonReader {
 public:
  static constexpr bool kVisitsEveryField = true;
  explicit JsonReader(const json& j) : j_(j) {}
  template <typename T>
  void field(const char* name, const T& v) {
    readOpt(j_, name, writable(v));
  }
  template <typename T>
  void object(const char* name, const T& v) {
    readOpt(j_, name, writable(v));
  }
  template <typename T>
  void list(const char* name, const T& v) {
    readOpt(j_, name, writable(v));
  }

  template <typename T>
  static void read(const json& j, const char* what, T& v) {
    requireObject(j, what);
    JsonReader in(j);
    describe(v, in);
  }

 private:
  // describe() sees the value as const, since it serves the writers too; a reader is only given
  // values its caller may change (from_json's).
  template <typename T>
  static T& writable(const T& v) {
    return const_cast<T&>(v);
  }
  const json& j_;
};

}  // namespace

void to_json(json& j, const TimeWindow& v) { j = described(v); }
void from_json(const json& j, TimeWindow& v) { JsonReader::read(j, "window", v); }

void to_json(json& j, const Stats& v) { j = described(v); }
void from_json(const json& j, Stats& v) { JsonReader::read(j, "stats", v); }

void to_json(json& j, const CallSiteStats& v) { j = described(v); }
void from_json(const json& j, CallSiteStats& v) { JsonReader::read(j, "callsite", v); }

void to_json(json& j, const LoopStats& v) { j = described(v); }
void from_json(const json& j, LoopStats& v) { JsonReader::read(j, "loop", v); }

void to_json(json& j, const SizeStats& v) { j = described(v); }
void from_json(const json& j, SizeStats& v) { JsonReader::read(j, "result_size", v); }

void to_json(json& j, const Exposure& v) { j = described(v); }
void from_json(const json& j, Exposure& v) { JsonReader::read(j, "exposure", v); }

void to_json(json& j, const UnprobedKey& v) { j = described(v); }
void from_json(const json& j, UnprobedKey& v) { JsonReader::read(j, "unprobed", v); }

void to_json(json& j, const FeedbackItem& v) { j = described(v); }
void from_json(const json& j, FeedbackItem& v) {
  requireObject(j, "item");
  auto key = j.find("key");
  if (key == j.end() || !key->is_string() || key->get_ref<const std::string&>().empty()) {
    throw FeedbackFormatError("item: \"key\" must be a non-empty string");
  }
  v.key = key->get<std::string>();
  JsonReader in(j);
  describe(v, in);
}

void to_json(json& j, const BatchGetRequest& v) {
  j = json{{"keys", v.keys}};
  if (v.range) j["range"] = *v.range;
  if (v.baseline) j["baseline"] = *v.baseline;
}
void from_json(const json& j, BatchGetRequest& v) {
  requireObject(j, "request");
  auto keys = j.find("keys");
  if (keys == j.end() || !keys->is_array()) {
    throw FeedbackFormatError("request: \"keys\" must be an array of strings");
  }
  v.keys = keys->get<std::vector<std::string>>();
  readOpt(j, "range", v.range);
  readOpt(j, "baseline", v.baseline);
}

void to_json(json& j, const BatchGetResponse& v) {
  j = json{{"items", v.items}, {"missing", v.missing}};
  if (!v.cursor.empty()) j["cursor"] = v.cursor;
  if (!v.unprobed.empty()) j["unprobed"] = v.unprobed;
}
void from_json(const json& j, BatchGetResponse& v) {
  if (j.is_array()) {  // a bare list of items is accepted as a dataset
    v.items = j.get<std::vector<FeedbackItem>>();
    return;
  }
  requireObject(j, "response");
  auto items = j.find("items");
  if (items == j.end() || !items->is_array()) {
    throw FeedbackFormatError("response: \"items\" must be an array");
  }
  v.items = items->get<std::vector<FeedbackItem>>();
  readOpt(j, "missing", v.missing);
  readOpt(j, "cursor", v.cursor);
  readOpt(j, "unprobed", v.unprobed);
}

BatchGetResponse parseBatchGetResponse(std::string_view text) {
  return parseDocument<BatchGetResponse>(text, "feedback");
}
bool parsePlainKeysRequest(std::string_view text, std::vector<std::string>& keys) {
  size_t i = 0;
  auto space = [&] {
    while (i < text.size() &&
           (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) {
      ++i;
    }
  };
  auto token = [&](std::string_view t) {
    space();
    if (text.substr(i, t.size()) != t) return false;
    i += t.size();
    return true;
  };
  if (!token("{") || !token("\"keys\"") || !token(":") || !token("[")) return false;
  std::vector<std::string> found;
  found.reserve(text.size() / 32);
  if (!token("]")) {
    do {
      if (!token("\"")) return false;
      const size_t start = i;
      for (; i < text.size() && text[i] != '"'; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x20 || c >= 0x80 || c == '\\') return false;  // escapes, UTF-8: the full parser
      }
      if (i == text.size()) return false;
      found.emplace_back(text.substr(start, i - start));
      ++i;
    } while (token(","));
    if (!token("]")) return false;
  }
  if (!token("}")) return false;
  space();
  if (i != text.size()) return false;
  keys = std::move(found);
  return true;
}

BatchGetRequest parseBatchGetRequest(std::string_view text) {
  BatchGetRequest plain;
  if (parsePlainKeysRequest(text, plain.keys)) return plain;
  return parseDocument<BatchGetRequest>(text, "batchGet request");
}
std::string serialize(const BatchGetResponse& response) { return json(response).dump(); }
std::string serialize(const BatchGetRequest& request) { return json(request).dump(); }

}  // namespace perfhat
