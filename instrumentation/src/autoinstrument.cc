// -finstrument-functions mode: every function compiled with the flag calls these hooks. Each
// function address gets a dynamically created Site on first entry (symbolized once, under a
// lock, never again on the hot path); the engine's scope (PERFHAT_SCOPE allow/deny patterns)
// applies to the demangled name. Probes live on a per-thread stack because enter and exit are
// separate calls.
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>

#include "perfhat/perfhat.hpp"
#include "symbolize.h"

#define PERFHAT_NOINSTR __attribute__((no_instrument_function))

namespace perfhat::autoinstrument {
namespace {

constexpr int kMaxDepth = 256;
constexpr int kCacheSize = 1024;  // direct-mapped, per thread

struct Frame {
  alignas(detail::Probe) unsigned char storage[sizeof(detail::Probe)];
};

struct ThreadStack {
  Frame frames[kMaxDepth];
  int depth = 0;  // logical depth, including frames past kMaxDepth
  bool in_hook = false;
  struct {
    void* fn;
    detail::Site* site;
  } cache[kCacheSize] = {};
};

thread_local ThreadStack* t_stack = nullptr;
thread_local bool t_stack_dead = false;

struct StackGuard {
  PERFHAT_NOINSTR ~StackGuard() {
    t_stack_dead = true;
    // Frames still open (thread exiting mid-call) are abandoned, not destroyed: their exits
    // will never come.
    delete t_stack;
    t_stack = nullptr;
  }
};
thread_local StackGuard t_stack_guard;

std::mutex g_mu;
std::unordered_map<void*, detail::Site*>& sites() {
  static auto* m = new std::unordered_map<void*, detail::Site*>();
  return *m;
}

PERFHAT_NOINSTR detail::Site* site_for(void* fn) {
  std::lock_guard<std::mutex> l(g_mu);
  auto it = sites().find(fn);
  if (it != sites().end()) return it->second;
  symbolize::Symbol sym = symbolize::resolve(fn);
  // Sites live for the whole process (probes reference them).
  const char* name = strdup(sym.demangled.empty() ? "?" : sym.demangled.c_str());
  auto* site = new detail::Site(nullptr, name, "", 0, detail::kFunction);
  site->address = fn;
  site->mangled = sym.mangled.empty() ? nullptr : strdup(sym.mangled.c_str());
  sites().emplace(fn, site);
  return site;
}

PERFHAT_NOINSTR ThreadStack* stack() {
  if (t_stack == nullptr && !t_stack_dead) {
    t_stack = new (std::nothrow) ThreadStack();
    (void)&t_stack_guard;  // odr-use: registers the destructor for this thread
  }
  return t_stack;
}

}  // namespace

// Number of distinct functions seen (tests, diagnostics).
PERFHAT_NOINSTR size_t functions_seen() {
  std::lock_guard<std::mutex> l(g_mu);
  return sites().size();
}

}  // namespace perfhat::autoinstrument

using namespace perfhat::autoinstrument;

// NOLINTNEXTLINE(bugprone-reserved-identifier): hook name fixed by -finstrument-functions
extern "C" PERFHAT_NOINSTR void __cyg_profile_func_enter(void* fn, void* /*call_site*/) {
  ThreadStack* s = stack();
  if (s == nullptr || s->in_hook) return;
  int d = s->depth++;
  if (d >= kMaxDepth) return;
  s->in_hook = true;
  auto& c = s->cache[(reinterpret_cast<uintptr_t>(fn) >> 4) & (kCacheSize - 1)];
  if (c.fn != fn) {
    c.site = site_for(fn);
    c.fn = fn;
  }
  new (s->frames[d].storage) perfhat::detail::Probe(*c.site);
  s->in_hook = false;
}

// NOLINTNEXTLINE(bugprone-reserved-identifier): hook name fixed by -finstrument-functions
extern "C" PERFHAT_NOINSTR void __cyg_profile_func_exit(void* /*fn*/, void* /*call_site*/) {
  ThreadStack* s = t_stack;
  if (s == nullptr || s->in_hook || s->depth == 0) return;
  int d = --s->depth;
  if (d >= kMaxDepth) return;
  s->in_hook = true;
  std::launder(reinterpret_cast<perfhat::detail::Probe*>(s->frames[d].storage))->~Probe();
  s->in_hook = false;
}
