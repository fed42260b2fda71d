// cpp-httplib's server types, declared for the headers that only name them in signatures (the
// route handlers); the .cc files include <httplib.h>.
#pragma once

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib
