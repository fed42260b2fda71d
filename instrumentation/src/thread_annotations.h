// Checked locking: Clang's thread-safety analysis (-Wthread-safety) over an annotated mutex, the
// one copy for libperfhat and the rest of the tree. State shared between threads is declared
// PERFHAT_GUARDED_BY(its mutex); functions that expect the lock held say PERFHAT_REQUIRES(mu),
// and the clang build (CMake preset `tsa`, scripts/test.sh) turns every unguarded access into an
// error. Other compilers see plain std::mutex code. It includes nothing but the standard library,
// since libperfhat includes nothing of the tree; the tree includes it through
// common/thread_annotations.h, which gives it the tree's unprefixed names (GUARDED_BY, ...).
//
//   Mutex mu_;
//   int hits_ PERFHAT_GUARDED_BY(mu_) = 0;
//   void add() { Lock lock(mu_); ++hits_; }
//   void wait() { MutexLock lock(mu_); while (hits_ == 0) changed_.wait(lock); }
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define PERFHAT_TSA(x) __attribute__((x))
#else
#define PERFHAT_TSA(x)
#endif

#define PERFHAT_CAPABILITY(x) PERFHAT_TSA(capability(x))
#define PERFHAT_SCOPED_CAPABILITY PERFHAT_TSA(scoped_lockable)
#define PERFHAT_GUARDED_BY(x) PERFHAT_TSA(guarded_by(x))
#define PERFHAT_PT_GUARDED_BY(x) PERFHAT_TSA(pt_guarded_by(x))
#define PERFHAT_ACQUIRED_BEFORE(...) PERFHAT_TSA(acquired_before(__VA_ARGS__))
#define PERFHAT_ACQUIRED_AFTER(...) PERFHAT_TSA(acquired_after(__VA_ARGS__))
#define PERFHAT_REQUIRES(...) PERFHAT_TSA(requires_capability(__VA_ARGS__))
#define PERFHAT_ACQUIRE(...) PERFHAT_TSA(acquire_capability(__VA_ARGS__))
#define PERFHAT_RELEASE(...) PERFHAT_TSA(release_capability(__VA_ARGS__))
#define PERFHAT_TRY_ACQUIRE(...) PERFHAT_TSA(try_acquire_capability(__VA_ARGS__))
#define PERFHAT_EXCLUDES(...) PERFHAT_TSA(locks_excluded(__VA_ARGS__))
#define PERFHAT_ASSERT_CAPABILITY(x) PERFHAT_TSA(assert_capability(x))
#define PERFHAT_RETURN_CAPABILITY(x) PERFHAT_TSA(lock_returned(x))
#define PERFHAT_NO_THREAD_SAFETY_ANALYSIS PERFHAT_TSA(no_thread_safety_analysis)

namespace perfhat::detail {

// std::mutex the analysis knows about.
class PERFHAT_CAPABILITY("mutex") Mutex {
 public:
  void lock() PERFHAT_ACQUIRE() { m_.lock(); }
  void unlock() PERFHAT_RELEASE() { m_.unlock(); }
  bool try_lock() PERFHAT_TRY_ACQUIRE(true) { return m_.try_lock(); }
  std::mutex& native() { return m_; }

 private:
  std::mutex m_;
};

// Holds a Mutex for its whole scope, as std::lock_guard does.
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
// work and take it back, and a CondVar can wait on it (std::unique_lock underneath).
class PERFHAT_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& m) PERFHAT_ACQUIRE(m) : lock_(m.native()) {}
  ~MutexLock() PERFHAT_RELEASE() {}
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;
  void unlock() PERFHAT_RELEASE() { lock_.unlock(); }
  void lock() PERFHAT_ACQUIRE() { lock_.lock(); }

 private:
  friend class CondVar;
  std::unique_lock<std::mutex> lock_;
};

// std::condition_variable over a MutexLock. Waits without a predicate: callers loop on their
// condition (`while (!ready_) cv.wait(lock);`), which the analysis checks like any access.
class CondVar {
 public:
  void wait(MutexLock& lock) { cv_.wait(lock.lock_); }
  template <typename Clock, typename Duration>
  std::cv_status waitUntil(MutexLock& lock, const std::chrono::time_point<Clock, Duration>& t) {
    return cv_.wait_until(lock.lock_, t);
  }
  template <typename Rep, typename Period>
  std::cv_status waitFor(MutexLock& lock, const std::chrono::duration<Rep, Period>& d) {
    return cv_.wait_for(lock.lock_, d);
  }
  void notifyOne() { cv_.notify_one(); }
  void notifyAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace perfhat::detail
