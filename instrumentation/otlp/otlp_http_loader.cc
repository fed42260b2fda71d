#include "otlp_http_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

// Where the program's CMake package (or perfhat's build tree) keeps the module: compiled into the
// program from perfhat_otlp_module_dir.cc.in by find_package(perfhat). Weak: absent (null) in a
// program linked without CMake.
extern "C" [[gnu::weak]] const char* perfhat_otlp_package_module_dir();

namespace perfhat::otlp {
namespace {

// The directory holding the object that contains this code: libperfhat's shared library, or
// the program itself when perfhat::otlp is linked statically. For the program, dladdr() gives
// argv[0] as it was exec'd, which may be relative (or chosen by whoever started the process):
// then the program's own path is taken from /proc/self/exe instead. Empty if neither is
// absolute.
std::string ownDirectory() {
  Dl_info info{};
  std::string self;
  if (dladdr(reinterpret_cast<void*>(&http_module), &info) != 0 && info.dli_fname != nullptr)
    self = info.dli_fname;
  if (self.empty() || self.front() != '/') {
    char exe[4096];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    self = n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string();
  }
  const size_t slash = self.rfind('/');
  if (self.empty() || self.front() != '/' || slash == std::string::npos) return "";
  return self.substr(0, slash + 1);
}

std::vector<std::string> candidates() {
  // secure_getenv: a set-user-ID or capability-raised program does not load what its caller's
  // environment names.
  const char* forced = secure_getenv("PERFHAT_OTLP_MODULE");
  if (forced != nullptr && *forced != '\0') return {forced};
  std::vector<std::string> out;
  if (const std::string dir = ownDirectory(); !dir.empty()) {
    out.push_back(dir + "perfhat/" PERFHAT_OTLP_HTTP_MODULE_NAME);
    out.push_back(dir + PERFHAT_OTLP_HTTP_MODULE_NAME);
  }
  if (&perfhat_otlp_package_module_dir != nullptr) {
    const char* dir = perfhat_otlp_package_module_dir();
    if (dir != nullptr && *dir != '\0')
      out.push_back(std::string(dir) + "/" PERFHAT_OTLP_HTTP_MODULE_NAME);
  }
  // The loader's own search (LD_LIBRARY_PATH, a RUNPATH the program was linked with, ld.so.cache).
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
