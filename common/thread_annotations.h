// Checked locking: Clang's thread-safety analysis (-Wthread-safety) over an annotated mutex.
// State shared between threads is declared GUARDED_BY(its mutex); functions that expect the
// lock held say REQUIRES(mu), and the clang build (CMake preset `tsa`, scripts/test.sh) turns
// every unguarded access into an error. Other compilers see plain std::mutex code.
//
//   Mutex mu_;
//   int hits_ GUARDED_BY(mu_) = 0;
//   void add() { MutexLock lock(mu_); ++hits_; }
//   void wait() { MutexLock lock(mu_); while (hits_ == 0) changed_.wait(lock); }
//
// The mutex, its locks and the condition variable are libperfhat's, which needs them too and
// includes nothing of the tree (the one exception to common/ including nothing of libperfhat,
// scripts/layers_check.py): this header gives them the tree's names.
#pragma once

#include "instrumentation/src/thread_annotations.h"

#define CAPABILITY(x) PERFHAT_CAPABILITY(x)
#define SCOPED_CAPABILITY PERFHAT_SCOPED_CAPABILITY
#define GUARDED_BY(x) PERFHAT_GUARDED_BY(x)
#define PT_GUARDED_BY(x) PERFHAT_PT_GUARDED_BY(x)
#define ACQUIRED_BEFORE(...) PERFHAT_ACQUIRED_BEFORE(__VA_ARGS__)
#define ACQUIRED_AFTER(...) PERFHAT_ACQUIRED_AFTER(__VA_ARGS__)
#define REQUIRES(...) PERFHAT_REQUIRES(__VA_ARGS__)
#define ACQUIRE(...) PERFHAT_ACQUIRE(__VA_ARGS__)
#define RELEASE(...) PERFHAT_RELEASE(__VA_ARGS__)
#define TRY_ACQUIRE(...) PERFHAT_TRY_ACQUIRE(__VA_ARGS__)
#define EXCLUDES(...) PERFHAT_EXCLUDES(__VA_ARGS__)
#define ASSERT_CAPABILITY(x) PERFHAT_ASSERT_CAPABILITY(x)
#define RETURN_CAPABILITY(x) PERFHAT_RETURN_CAPABILITY(x)
#define NO_THREAD_SAFETY_ANALYSIS PERFHAT_NO_THREAD_SAFETY_ANALYSIS

namespace perfhat {
using detail::CondVar;
using detail::Mutex;
using detail::MutexLock;
}  // namespace perfhat
