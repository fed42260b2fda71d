#include "server/index/idle_handoff.h"

#include <pthread.h>

namespace perfhat::index {

IdleHandoff::IdleHandoff() : thread_([this] { loop(); }) {}

IdleHandoff::~IdleHandoff() {
  stopping_.store(true);
  pushes_.fetch_add(1);
  pushes_.notify_one();
  thread_.join();
  drain();  // pushed after the thread's last look
}

void IdleHandoff::push(std::function<void()> work) {
  Node* n = new Node{std::move(work), head_.load(std::memory_order_relaxed)};
  while (!head_.compare_exchange_weak(n->next, n, std::memory_order_release,
                                      std::memory_order_relaxed)) {
  }
  pushes_.fetch_add(1, std::memory_order_release);
  pushes_.notify_one();
}

bool IdleHandoff::drain() {
  Node* n = head_.exchange(nullptr, std::memory_order_acquire);
  if (!n) return false;
  Node* oldest_first = nullptr;
  while (n) {
    Node* next = n->next;
    n->next = oldest_first;
    oldest_first = n;
    n = next;
  }
  while (oldest_first) {
    Node* next = oldest_first->next;
    try {
      oldest_first->work();
    } catch (...) {  // one failed report must not end the index's publishing
    }
    delete oldest_first;
    oldest_first = next;
  }
  return true;
}

void IdleHandoff::loop() {
  pthread_setname_np(pthread_self(), "perfhat-publish");
  for (;;) {
    const unsigned seen = pushes_.load(std::memory_order_acquire);
    drain();
    if (stopping_.load()) {
      // What was pushed between that drain and the stop still runs here, on this thread: every
      // push the destructor's caller made happened before it set stopping_.
      drain();
      return;
    }
    pushes_.wait(seen, std::memory_order_acquire);  // returns at once if a push came meanwhile
  }
}

}  // namespace perfhat::index
