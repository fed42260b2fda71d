// Splitting one large request over the machine's cores (a 10,000-key batchGet is read and
// written in chunks on parallel threads). Threads are started per call: only requests large
// enough to give each thread ≥ min_per_chunk items are split, and for those a thread start
// (tens of µs) is noise.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace perfhat::handler {

// Threads a handler uses for one request: one per core, at most 4 (configured 0), or as set.
inline size_t requestThreads(int configured) {
  if (configured > 0) return static_cast<size_t>(configured);
  return std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), 4);
}

// How many chunks `n` items go in: each at least `min_per_chunk`, at most `threads`.
inline size_t chunkCount(size_t n, size_t min_per_chunk, size_t threads) {
  return std::max<size_t>(1, std::min(threads, n / std::max<size_t>(1, min_per_chunk)));
}

// Calls fn(chunk, begin, end) for `chunks` contiguous ranges covering [0, n): chunk 0 on the
// calling thread, the others each on a thread of its own (on the calling thread, after chunk 0,
// when no thread can be started). Returns when all have finished; rethrows the first chunk's
// exception, if any.
template <typename Fn>
void forEachChunk(size_t n, size_t chunks, Fn&& fn) {
  chunks = std::max<size_t>(1, chunks);
  std::vector<std::exception_ptr> errors(chunks);
  auto run = [&](size_t c) {
    try {
      fn(c, n * c / chunks, n * (c + 1) / chunks);
    } catch (...) {
      errors[c] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(chunks - 1);
  size_t started = 1;
  try {
    for (; started < chunks; ++started) threads.emplace_back(run, started);
  } catch (const std::system_error&) {  // out of threads: the rest run here
  }
  run(0);
  for (size_t c = started; c < chunks; ++c) run(c);
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace perfhat::handler
