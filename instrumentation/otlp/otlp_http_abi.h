/* The C interface between perfhat::otlp (static, linked into the program) and the OTLP/HTTP
 * transport module libperfhat_otlp_http.so (cpp-httplib with OpenSSL and Brotli, zlib), which
 * perfhat::otlp loads with dlopen() at its first request: a program that exports nothing never
 * maps those libraries (docs/auto-instrumentation.md). Plain C types only, so the module and the
 * program need not agree on a C++ standard library ABI. Build time only: not installed. */
#ifndef PERFHAT_OTLP_HTTP_ABI_H
#define PERFHAT_OTLP_HTTP_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a struct below changes; the loader refuses a module of another version. */
#define PERFHAT_OTLP_HTTP_ABI_VERSION 1u
/* The one symbol the module exports. */
#define PERFHAT_OTLP_HTTP_ENTRY "perfhat_otlp_http_entry"
#define PERFHAT_OTLP_HTTP_MODULE_NAME "libperfhat_otlp_http.so"

typedef struct perfhat_http_header {
  const char* name;
  const char* value;
} perfhat_http_header;

typedef struct perfhat_http_client_options {
  const char* base_url;               /* scheme://host[:port], no path */
  const perfhat_http_header* headers; /* sent with every request (copied by create) */
  size_t header_count;
  double connect_timeout_s;
  double timeout_s; /* read and write */
  int gzip;         /* compress bodies (Content-Encoding: gzip is among the headers) */
} perfhat_http_client_options;

/* post(): the HTTP status of the response, or one of these (message in `error`). */
#define PERFHAT_HTTP_NO_RESPONSE 0      /* connection or timeout failure: worth a retry */
#define PERFHAT_HTTP_LOCAL_FAILURE (-1) /* the body could not be prepared: never retried */

typedef struct perfhat_http_api {
  uint32_t abi_version;
  /* NULL on failure, with a message in error[0, error_size). */
  void* (*create)(const perfhat_http_client_options* options, char* error, size_t error_size);
  /* One POST on the client's keep-alive connection. Not thread-safe per client (the caller
   * serialises). On a status outside 2xx, `error` receives up to 200 bytes of the body. */
  int (*post)(void* client, const char* path, const char* body, size_t size,
              const char* content_type, char* error, size_t error_size);
  void (*stop)(void* client); /* closes the connection; post() may be called again */
  void (*destroy)(void* client);
} perfhat_http_api;

/* The module's entry: its table if it speaks `abi_version`, else NULL. */
typedef const perfhat_http_api* (*perfhat_otlp_http_entry_fn)(uint32_t abi_version);

#ifdef __cplusplus
}
#endif

#endif /* PERFHAT_OTLP_HTTP_ABI_H */
