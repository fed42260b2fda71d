// JSON-RPC 2.0 message classification and construction (LSP base protocol).
//
// parseMessage() turns one framed body into a request, notification or response, or into the
// error reply the spec requires (-32700 for unparsable JSON, -32600 for a structurally invalid
// message). Nothing here throws on bad input.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace perfhat::lsp {

using json = nlohmann::json;

enum ErrorCode : int {
  kParseError = -32700,
  kInvalidRequest = -32600,
  kMethodNotFound = -32601,
  kInvalidParams = -32602,
  kInternalError = -32603,
  kServerNotInitialized = -32002,
  kUnknownErrorCode = -32001,
  kRequestFailed = -32803,
  kServerCancelled = -32802,
  kContentModified = -32801,
  kRequestCancelled = -32800,
};

struct ResponseError {
  int code = kInternalError;
  std::string message;
  json data;  // null when absent
};

struct Message {
  enum class Kind { Request, Notification, Response };
  Kind kind = Kind::Notification;
  json id;                             // number or string for requests/responses; null otherwise
  std::string method;                  // requests and notifications
  json params;                         // null when absent
  json result;                         // responses
  std::optional<ResponseError> error;  // error responses
};

// Either a message, or the error reply to send back (whose id is null when it is unknown).
struct Incoming {
  std::optional<Message> message;
  std::optional<json> error_reply;
  std::string problem;  // human-readable reason when the body was rejected (for the log)
};

// Messages nested deeper than this are refused with a parse error (-32700) before anything
// copies them: nothing in LSP 3.17 nests more than a few dozen levels.
inline constexpr int kMaxMessageDepth = 128;

Incoming parseMessage(std::string_view body);

json makeResult(const json& id, json result);
json makeError(const json& id, int code, std::string_view message);
json makeNotification(std::string_view method, json params);
json makeRequest(const json& id, std::string_view method, json params);

// Thrown by handlers to turn into an error response with the given code.
class RpcError : public std::runtime_error {
 public:
  RpcError(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

}  // namespace perfhat::lsp
