// JSON form of the inter-handler bulk export (GET /v1/export?since=CURSOR): raw aggregates with
// base64 DDSketch blobs, so a local handler merges upstreams exactly instead of averaging
// percentiles. Internal to perfhat handlers (not part of the stable read API).
//   {"cursor":"12","more":false,
//    "aggregates":[{"kind":"f","key":"…","sub":"","bucket":29395000,"service":"…","version":"…",
//                   "env":"…","origin":"","sketch":"RERTMQ…","x1":0,"x2":0,"x3":0,"line":0}],
//    "functions":[{"key":"…","mangled":"…","file":"…","line":3,"last_seen_ns":…}],
//    "hosts":[{"key":"…","host":"…","last_seen_ns":…}]}
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "feedback-handler/store/store.h"

namespace perfhat::handler {

class ExportFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string serializeExport(const ExportPage& page);
// Throws ExportFormatError on malformed JSON, wrong types, bad base64 or corrupt sketches.
ExportPage parseExport(std::string_view text);

}  // namespace perfhat::handler
