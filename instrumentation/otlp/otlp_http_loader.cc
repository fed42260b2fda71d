#include "otlp_http_loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

namespace perfhat::otlp {
namespace {

std::vector<std::string> candidates() {
  const char* forced = std::getenv("PERFHAT_OTLP_MODULE");
  if (forced != nullptr && *forced != '\0') return {forced};
  std::vector<std::string> out;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&http_module), &info) != 0 && info.dli_fname != nullptr) {
    std::string self = info.dli_fname;
    const size_t slash = self.rfind('/');
    if (slash != std::string::npos) {
      const std::string dir = self.substr(0, slash + 1);
      out.push_back(dir + "perfhat/" PERFHAT_OTLP_HTTP_MODULE_NAME);
      out.push_back(dir + PERFHAT_OTLP_HTTP_MODULE_NAME);
    }
  }
  out.push_back(PERFHAT_OTLP_HTTP_MODULE_NAME);
#ifdef PERFHAT_OTLP_MODULE_INSTALL_PATH
  out.push_back(PERFHAT_OTLP_MODULE_INSTALL_PATH);
#endif
  return out;
}

HttpModule load() {
  HttpModule m;
  for (const std::string& path : candidates()) {
    // RTLD_LOCAL: httplib's and OpenSSL's symbols stay out of the program's namespace.
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (h == nullptr) {
      const char* why = dlerror();
      m.error += (m.error.empty() ? "" : "; ") + std::string(why != nullptr ? why : path);
      continue;
    }
    auto entry = reinterpret_cast<perfhat_otlp_http_entry_fn>(dlsym(h, PERFHAT_OTLP_HTTP_ENTRY));
    const perfhat_http_api* api = entry != nullptr ? entry(PERFHAT_OTLP_HTTP_ABI_VERSION) : nullptr;
    if (api == nullptr) {
      m.error += (m.error.empty() ? "" : "; ") + path +
                 ": not a perfhat OTLP module of interface version " +
                 std::to_string(PERFHAT_OTLP_HTTP_ABI_VERSION);
      dlclose(h);
      continue;
    }
    m.api = api;
    m.path = path;
    m.error.clear();
    return m;
  }
  return m;
}

}  // namespace

const HttpModule& http_module() {
  static const HttpModule m = load();
  return m;
}

}  // namespace perfhat::otlp
