// How the handler's routes answer: the JSON error shape, protobuf partial success, documents
// sent in pieces, and the parsing of cursor-like parameters.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace httplib {
struct Response;
}

namespace perfhat::handler {

inline constexpr const char* kJson = "application/json";

// {"error":{"code","message"}} with `status`.
void setError(httplib::Response& res, int status, const std::string& code,
              const std::string& message);
// The error code of a status httplib answered on its own (404, 413, ...).
std::string defaultCode(int status);
// ExportTraceServiceResponse with a partial success.
std::string protoPartialSuccess(uint64_t rejected, const std::string& message);
// Sends a document made of consecutive pieces without joining them.
void sendPieces(httplib::Response& res, std::vector<std::string> pieces, const char* type);

}  // namespace perfhat::handler
