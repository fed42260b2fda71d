// libperfhat_otlp_http.so: the HTTP side of the OTLP exporter (cpp-httplib, zlib), loaded by
// perfhat::otlp only when a request is to be sent (otlp_http_abi.h). Its only export is the
// entry; everything else is hidden (-fvisibility=hidden).
#include <httplib.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "otlp_http_abi.h"

namespace {

void set_error(char* out, size_t size, const std::string& message) {
  if (out == nullptr || size == 0) return;
  const size_t n = std::min(size - 1, message.size());
  std::memcpy(out, message.data(), n);
  out[n] = '\0';
}

struct Client {
  std::unique_ptr<httplib::Client> http;
  httplib::Headers headers;  // built once: the same on every request
  bool gzip = false;
  // One deflate stream reset per body (no per-request allocation) and its output buffer.
  z_stream zs{};
  bool zs_ready = false;
  std::string gz;

  ~Client() {
    if (zs_ready) deflateEnd(&zs);
  }

  // Compresses `body` into `gz`; false with `error` if zlib fails.
  bool compress(const char* body, size_t size, std::string& error) {
    if (!zs_ready) {
      if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        error = "gzip: deflateInit2 failed";
        return false;
      }
      zs_ready = true;
    } else if (deflateReset(&zs) != Z_OK) {
      error = "gzip: deflateReset failed";
      return false;
    }
    gz.resize(deflateBound(&zs, static_cast<uLong>(size)));
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body));
    zs.avail_in = static_cast<uInt>(size);
    zs.next_out = reinterpret_cast<Bytef*>(gz.data());
    zs.avail_out = static_cast<uInt>(gz.size());
    if (deflate(&zs, Z_FINISH) != Z_STREAM_END) {  // the bound guarantees one call suffices
      error = "gzip: deflate failed";
      return false;
    }
    gz.resize(zs.total_out);
    return true;
  }
};

void* create(const perfhat_http_client_options* o, char* error, size_t error_size) {
  try {
    auto c = std::make_unique<Client>();
    c->http = std::make_unique<httplib::Client>(o->base_url);
    if (!c->http->is_valid()) {
      set_error(error, error_size, std::string("cannot use endpoint '") + o->base_url + "'");
      return nullptr;
    }
    for (size_t i = 0; i < o->header_count; ++i)
      c->headers.emplace(o->headers[i].name, o->headers[i].value);
    c->gzip = o->gzip != 0;
    auto secs = [](double s) { return static_cast<time_t>(s); };
    auto usecs = [](double s) {
      return static_cast<time_t>((s - static_cast<double>(static_cast<time_t>(s))) * 1e6);
    };
    c->http->set_connection_timeout(secs(o->connect_timeout_s), usecs(o->connect_timeout_s));
    c->http->set_read_timeout(secs(o->timeout_s), usecs(o->timeout_s));
    c->http->set_write_timeout(secs(o->timeout_s), usecs(o->timeout_s));
    c->http->set_keep_alive(true);
    return c.release();
  } catch (const std::exception& e) {
    set_error(error, error_size, e.what());
    return nullptr;
  }
}

int post(void* client, const char* path, const char* body, size_t size, const char* content_type,
         char* error, size_t error_size) {
  auto* c = static_cast<Client*>(client);
  try {
    std::string why;
    if (c->gzip) {
      if (!c->compress(body, size, why)) {
        set_error(error, error_size, why);
        return PERFHAT_HTTP_LOCAL_FAILURE;
      }
      body = c->gz.data();
      size = c->gz.size();
    }
    // A content provider, not Post(..., body, ...): that overload copies the body into the
    // request first; this one writes it from the caller's buffer straight to the socket. The
    // provider is stateless, so a resend (stale keep-alive connection) writes the same bytes.
    auto res = c->http->Post(
        path, c->headers, size,
        [body](size_t offset, size_t length, httplib::DataSink& sink) {
          return sink.write(body + offset, length);
        },
        content_type);
    if (!res) {
      set_error(error, error_size, httplib::to_string(res.error()));
      return PERFHAT_HTTP_NO_RESPONSE;
    }
    if (res->status < 200 || res->status >= 300)
      set_error(error, error_size, res->body.substr(0, 200));
    return res->status;
  } catch (const std::exception& e) {
    set_error(error, error_size, e.what());
    return PERFHAT_HTTP_LOCAL_FAILURE;
  }
}

void stop(void* client) { static_cast<Client*>(client)->http->stop(); }

void destroy(void* client) { delete static_cast<Client*>(client); }

constexpr perfhat_http_api kApi = {PERFHAT_OTLP_HTTP_ABI_VERSION, &create, &post, &stop, &destroy};

}  // namespace

extern "C" __attribute__((visibility("default"))) const perfhat_http_api* perfhat_otlp_http_entry(
    uint32_t abi_version) {
  return abi_version == PERFHAT_OTLP_HTTP_ABI_VERSION ? &kApi : nullptr;
}
