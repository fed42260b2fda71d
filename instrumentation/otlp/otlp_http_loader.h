// Finds and loads the OTLP/HTTP transport module (otlp_http_abi.h) once per process. Where it
// looks, in order (the first that loads wins):
//   1. $PERFHAT_OTLP_MODULE, if set: that file only;
//   2. beside the object that holds libperfhat (dladdr): <dir>/perfhat/ and <dir>/;
//   3. the package's <libdir>/perfhat, wherever it was moved to: find_package(perfhat) compiles
//      perfhat_otlp_package_module_dir() into every program linking perfhat::otlp;
//   4. the bare name: LD_LIBRARY_PATH, a RUNPATH the program was linked with, the loader's cache;
//   5. the install-time path <prefix>/<libdir>/perfhat/libperfhat_otlp_http.so.
#pragma once

#include <string>

#include "otlp_http_abi.h"

namespace perfhat::otlp {

struct HttpModule {
  const perfhat_http_api* api = nullptr;  // null: not loadable (`error` says why)
  std::string path;                       // the file loaded
  std::string error;                      // every place tried, and why each failed
};

// Loads the module on the first call (thread-safe); later calls return the same result. The
// module is never unloaded: its statics' destructors run at exit like the program's own.
const HttpModule& http_module();

}  // namespace perfhat::otlp
