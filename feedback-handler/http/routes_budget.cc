// libperfhat's collection-budget status (issue #22; docs/collection-budget.md):
//   POST /v1/budget            (write) one status, checked (budget/budget_status.h) and kept as
//                              the latest of its (service, instance); 200 {"accepted":true}
//   GET /v1/budget?service=S   (read) the newest status of S (of any service without S):
//                              {"service","version","instance","received_at","age_s","status"};
//                              404 when there is none
#include <httplib.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "feedback-handler/budget/budget_status.h"
#include "feedback-handler/http/http_answers.h"
#include "feedback-handler/http/server.h"
#include "feedback-handler/util/rfc3339.h"

namespace perfhat::handler {

using nlohmann::json;

void HandlerServer::postBudget(const httplib::Request& req, httplib::Response& res,
                               const httplib::ContentReader& reader) {
  std::string body;
  const size_t limit = std::min(options_.max_decoded_bytes, budget::StatusLimits::kMaxBodyBytes);
  if (!readBody(req, res, reader, limit, body)) return;
  metrics_.bytesReceived(body.size());
  if (req.get_header_value("Content-Type").rfind("application/json", 0) != 0) {
    return setError(res, 415, "unsupported_media_type", "Content-Type must be application/json");
  }
  budget::Status st;
  try {
    st = budget::parseStatus(body);
  } catch (const budget::StatusError& e) {
    return setError(res, 400, "invalid_argument", std::string("budget status: ") + e.what());
  }
  store_.putBudgetStatus({st.service, st.version, st.instance, std::move(st.json), store_.now()});
  res.set_content(R"({"accepted":true})", "application/json");
}

void HandlerServer::getBudget(const httplib::Request& req, httplib::Response& res) {
  const std::string service = req.get_param_value("service");
  if (service.size() > budget::StatusLimits::kMaxLabelBytes) {
    throw std::invalid_argument("service is longer than " +
                                std::to_string(budget::StatusLimits::kMaxLabelBytes) + " bytes");
  }
  const auto row = store_.budgetStatus(service);
  if (!row) {
    return setError(res, 404, "not_found",
                    service.empty() ? std::string("no collection-budget status received yet")
                                    : "no collection-budget status of service " + service);
  }
  json status = json::parse(row->status, nullptr, false);
  if (status.is_discarded()) status = nullptr;  // written by this handler: cannot happen
  const json out = {{"service", row->service},
                    {"version", row->version},
                    {"instance", row->instance},
                    {"received_at", formatRfc3339(row->received_ns)},
                    {"age_s", std::max<int64_t>(0, store_.now() - row->received_ns) / 1e9},
                    {"status", std::move(status)}};
  res.set_content(out.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

}  // namespace perfhat::handler
