// Read API of dynamic metrics (issue #24; docs/dynamic-metrics.md), same admission (auth, rate
// limit) as the other reads:
//
//   GET /v1/dynamic?key=K[&service=S][&version=V][&from=&to=][&limit=N]
//       {"key","visits","callers":[{"key","count"}],"callees":[…],"self":{"p50_ns","mean_ns"},
//        "inclusive":{"p50_ns","mean_ns"},"demand_rank", …}; 404 for a key without calls or
//        probe in the window
//   GET /v1/dynamic?service=S   the service's never-called and leaf functions, skew, top demand
//   GET /v1/dynamic/graph?format=dot|csv[&service=S][&version=V][&from=&to=][&key=K&depth=N]
//       [&matrix=vc|fi|fo|edges][&step_minutes=M]
#pragma once

#include <functional>

namespace httplib {
class Server;
class Response;
}  // namespace httplib

namespace perfhat::handler {

class Store;

// `before_read` runs before every read (the server makes acknowledged ingest readable there).
void registerDynamicRoutes(httplib::Server& server, Store& store,
                           std::function<void(httplib::Response&)> before_read);

}  // namespace perfhat::handler
