#include "server/lsp/jsonrpc.h"

#include "common/json_parse.h"

namespace perfhat::lsp {
namespace {

bool validId(const json& id) { return id.is_number_integer() || id.is_string(); }

Incoming reject(const json& id, int code, std::string problem) {
  Incoming in;
  in.error_reply = makeError(id, code, problem);
  in.problem = std::move(problem);
  return in;
}

}  // namespace

Incoming parseMessage(std::string_view body) {
  // Depth-limited: a message nested 200,000 deep parses, but copying it (params, result) would
  // recurse once per level and overflow the stack. LSP messages are a few dozen levels deep.
  JsonParse parsed = parseJson(body, kMaxMessageDepth);
  if (!parsed.ok()) return reject(nullptr, kParseError, "Parse error: body is " + parsed.error);
  json& j = parsed.value;
  if (!j.is_object()) {
    // LSP does not use JSON-RPC batches; an array or a scalar is an invalid request.
    return reject(nullptr, kInvalidRequest, "Invalid request: message is not a JSON object");
  }
  json id = nullptr;
  bool has_id = false;
  if (auto it = j.find("id"); it != j.end() && !it->is_null()) {
    if (!validId(*it)) {
      return reject(nullptr, kInvalidRequest, "Invalid request: id must be a number or a string");
    }
    id = *it;
    has_id = true;
  }
  auto version = j.find("jsonrpc");
  if (version == j.end() || *version != "2.0") {
    return reject(id, kInvalidRequest, "Invalid request: \"jsonrpc\" must be \"2.0\"");
  }
  Message m;
  m.id = id;
  auto method = j.find("method");
  if (method != j.end()) {
    if (!method->is_string()) {
      return reject(id, kInvalidRequest, "Invalid request: \"method\" must be a string");
    }
    m.method = method->get<std::string>();
    if (auto p = j.find("params"); p != j.end()) {
      if (!p->is_object() && !p->is_array() && !p->is_null()) {
        return reject(id, kInvalidRequest,
                      "Invalid request: \"params\" must be an object or an array");
      }
      m.params = *p;
    }
    m.kind = has_id ? Message::Kind::Request : Message::Kind::Notification;
    return Incoming{std::move(m), std::nullopt, {}};
  }
  // A response to one of our requests to the client.
  auto result = j.find("result");
  auto error = j.find("error");
  if (result == j.end() && error == j.end()) {
    return reject(id, kInvalidRequest, "Invalid request: no \"method\", \"result\" or \"error\"");
  }
  m.kind = Message::Kind::Response;
  if (result != j.end()) m.result = *result;
  if (error != j.end()) {
    ResponseError e;
    if (error->is_object()) {
      if (auto c = error->find("code"); c != error->end() && c->is_number_integer()) {
        e.code = c->get<int>();
      }
      if (auto msg = error->find("message"); msg != error->end() && msg->is_string()) {
        e.message = msg->get<std::string>();
      }
      if (auto d = error->find("data"); d != error->end()) e.data = *d;
    }
    m.error = std::move(e);
  }
  return Incoming{std::move(m), std::nullopt, {}};
}

json makeResult(const json& id, json result) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json makeError(const json& id, int code, std::string_view message) {
  return json{{"jsonrpc", "2.0"},
              {"id", id},
              {"error", {{"code", code}, {"message", std::string(message)}}}};
}

json makeNotification(std::string_view method, json params) {
  json j{{"jsonrpc", "2.0"}, {"method", std::string(method)}};
  if (!params.is_null()) j["params"] = std::move(params);
  return j;
}

json makeRequest(const json& id, std::string_view method, json params) {
  json j = makeNotification(method, std::move(params));
  j["id"] = id;
  return j;
}

}  // namespace perfhat::lsp
