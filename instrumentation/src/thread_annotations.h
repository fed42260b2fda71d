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
#define PERFHAT_TRY_ACQUIRE(...) PERFHAT_TSA(try_acquire_capability(__VA_ARGS__))
#define PERFHAT_RELEASE(...) PERFHAT_TSA(release_capability(__VA_ARGS__))
#define PERFHAT_SCOPED_CAPABILITY PERFHAT_TSA(scoped_lockable)

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace perfhat::detail {
// std::mutex with capability annotations so -Wthread-safety can check GUARDED_BY fields.
class PERFHAT_CAPABILITY("mutex") Mutex {
 public:
  void lock() PERFHAT_ACQUIRE() { m_.lock(); }
  void unlock() PERFHAT_RELEASE() { m_.unlock(); }
  bool try_lock() PERFHAT_TRY_ACQUIRE(true) { return m_.try_lock(); }
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

// Holds a Mutex for its scope like Lock, but unlock()/lock() let the scope drop it around slow
// work, and a CondVar can wait on it (std::unique_lock underneath).
class PERFHAT_SCOPED_CAPABILITY UniqueLock {
 public:
  explicit UniqueLock(Mutex& m) PERFHAT_ACQUIRE(m) : lock_(m.native()) {}
  ~UniqueLock() PERFHAT_RELEASE() {}
  UniqueLock(const UniqueLock&) = delete;
  UniqueLock& operator=(const UniqueLock&) = delete;
  void unlock() PERFHAT_RELEASE() { lock_.unlock(); }
  void lock() PERFHAT_ACQUIRE() { lock_.lock(); }

 private:
  friend class CondVar;
  std::unique_lock<std::mutex> lock_;
};

// std::condition_variable over a UniqueLock. No predicate overloads: callers loop on their
// condition, which the analysis then checks like any other access.
class CondVar {
 public:
  template <typename Rep, typename Period>
  std::cv_status wait_for(UniqueLock& lock, const std::chrono::duration<Rep, Period>& d) {
    return cv_.wait_for(lock.lock_, d);
  }
  void notify_one() { cv_.notify_one(); }
  void notify_all() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};
}  // namespace perfhat::detail
