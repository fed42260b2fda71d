// OTLP encoders (protobuf and JSON) for the structures of otlp.h. The handler never sends OTLP;
// these exist for tests, fuzz seeds and the load generator of the ingest benchmark, so that
// those exercise the decoders with byte-exact wire data.
#pragma once

#include <string>

#include "feedback-handler/otlp/otlp.h"

namespace perfhat::otlp {

std::string encodeProtobuf(const ExportRequest& request);
std::string encodeJson(const ExportRequest& request);

}  // namespace perfhat::otlp
