// Clang -Wthread-safety annotations; they expand to nothing on other compilers.
#pragma once

#if defined(__clang__)
#define PERFHAT_TSA(x) __attribute__((x))
#else
#define PERFHAT_TSA(x)
#endif

#define PERFHAT_GUARDED_BY(m) PERFHAT_TSA(guarded_by(m))
#define PERFHAT_REQUIRES(...) PERFHAT_TSA(requires_capability(__VA_ARGS__))
#define PERFHAT_EXCLUDES(...) PERFHAT_TSA(locks_excluded(__VA_ARGS__))
#define PERFHAT_CAPABILITY(x) PERFHAT_TSA(capability(x))
#define PERFHAT_ACQUIRE(...) PERFHAT_TSA(acquire_capability(__VA_ARGS__))
#define PERFHAT_RELEASE(...) PERFHAT_TSA(release_capability(__VA_ARGS__))
#define PERFHAT_SCOPED_CAPABILITY PERFHAT_TSA(scoped_lockable)

#include <mutex>

namespace perfhat::detail {
// std::mutex with capability annotations so -Wthread-safety can check GUARDED_BY fields.
class PERFHAT_CAPABILITY("mutex") Mutex {
 public:
  void lock() PERFHAT_ACQUIRE() { m_.lock(); }
  void unlock() PERFHAT_RELEASE() { m_.unlock(); }
  std::mutex& native() { return m_; }

 private:
  std::mutex m_;
};

class PERFHAT_SCOPED_CAPABILITY Lock {
 public:
  explicit Lock(Mutex& m) PERFHAT_ACQUIRE(m) : m_(m) { m_.lock(); }
  ~Lock() PERFHAT_RELEASE() { m_.unlock(); }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

 private:
  Mutex& m_;
};
}  // namespace perfhat::detail
