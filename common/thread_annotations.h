// Checked locking: Clang's thread-safety analysis (-Wthread-safety) over an annotated mutex.
// State shared between threads is declared GUARDED_BY(its mutex); functions that expect the
// lock held say REQUIRES(mu), and the clang build (CMake preset `tsa`, scripts/test.sh) turns
// every unguarded access into an error. Other compilers see plain std::mutex code.
//
//   Mutex mu_;
//   int hits_ GUARDED_BY(mu_) = 0;
//   void add() { MutexLock lock(mu_); ++hits_; }
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

#define CAPABILITY(x) PERFHAT_TSA(capability(x))
#define SCOPED_CAPABILITY PERFHAT_TSA(scoped_lockable)
#define GUARDED_BY(x) PERFHAT_TSA(guarded_by(x))
#define PT_GUARDED_BY(x) PERFHAT_TSA(pt_guarded_by(x))
#define ACQUIRED_BEFORE(...) PERFHAT_TSA(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) PERFHAT_TSA(acquired_after(__VA_ARGS__))
#define REQUIRES(...) PERFHAT_TSA(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) PERFHAT_TSA(acquire_capability(__VA_ARGS__))
#define RELEASE(...) PERFHAT_TSA(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) PERFHAT_TSA(try_acquire_capability(__VA_ARGS__))
#define EXCLUDES(...) PERFHAT_TSA(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) PERFHAT_TSA(assert_capability(x))
#define RETURN_CAPABILITY(x) PERFHAT_TSA(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS PERFHAT_TSA(no_thread_safety_analysis)

namespace perfhat {

// std::mutex the analysis knows about.
class CAPABILITY("mutex") Mutex {
 public:
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }

 private:
  friend class MutexLock;
  std::mutex mu_;
};

// Holds a Mutex for its scope (std::unique_lock underneath, so a CondVar can wait on it).
// unlock()/lock() let a scope drop the mutex around slow work and take it back.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : lock_(mu.mu_) {}
  ~MutexLock() RELEASE() {}
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;
  void unlock() RELEASE() { lock_.unlock(); }
  void lock() ACQUIRE() { lock_.lock(); }

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

}  // namespace perfhat
