#include "feedback-handler/http/http_answers.h"

#include <httplib.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "common/varint.h"

namespace perfhat::handler {

using nlohmann::json;

void setError(httplib::Response& res, int status, const std::string& code,
              const std::string& message) {
  res.status = status;
  res.set_content(json{{"error", {{"code", code}, {"message", message}}}}.dump(
                      -1, ' ', false, json::error_handler_t::replace),
                  kJson);
}

std::string defaultCode(int status) {
  switch (status) {
    case 400:
      return "invalid_argument";
    case 401:
      return "unauthenticated";
    case 403:
      return "permission_denied";
    case 404:
      return "not_found";
    case 408:
      return "deadline_exceeded";
    case 413:
      return "payload_too_large";
    case 415:
      return "unsupported_media_type";
    case 429:
      return "resource_exhausted";
    case 503:
      return "unavailable";
    default:
      return status >= 500 ? "internal" : "error";
  }
}

// ExportTraceServiceResponse { ExportTracePartialSuccess partial_success = 1
//   { int64 rejected_spans = 1; string error_message = 2; } }
std::string protoPartialSuccess(uint64_t rejected, const std::string& message) {
  std::string inner;
  inner.push_back(0x08);
  appendVarint(inner, rejected);
  inner.push_back(0x12);
  appendVarint(inner, message.size());
  inner += message;
  std::string out;
  out.push_back(0x0a);
  appendVarint(out, inner.size());
  return out + inner;
}

// A 10,000-key batchGet answer is ~7 MB, and joining it (then copying it into the response) cost
// ~10 % of the call.
void sendPieces(httplib::Response& res, std::vector<std::string> pieces, const char* type) {
  size_t total = 0;
  for (const std::string& p : pieces) total += p.size();
  auto owned = std::make_shared<std::vector<std::string>>(std::move(pieces));
  res.set_content_provider(
      total, type, [owned](size_t offset, size_t length, httplib::DataSink& sink) {
        for (const std::string& p : *owned) {  // a handful of pieces: find the one at `offset`
          if (offset >= p.size()) {
            offset -= p.size();
            continue;
          }
          return sink.write(p.data() + offset, std::min(length, p.size() - offset));
        }
        return false;
      });
}

}  // namespace perfhat::handler
