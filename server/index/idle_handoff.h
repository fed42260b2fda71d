// Work an idle-priority thread hands to a thread of normal priority, without a lock.
//
// The background indexer runs at SCHED_IDLE: on a loaded machine it may wait a long time for a
// CPU. Any lock it held while waiting would stall the threads that answer the editor (priority
// inversion: a hover waiting for the server's mutex, an edit's analysis waiting for the index's
// mutex). So the indexer never takes a lock another thread takes: what it has to publish (a
// file's summaries, a progress report) is pushed here with one compare-and-swap, and this
// class's own thread, at normal priority, applies it in order.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

namespace perfhat::index {

class IdleHandoff {
 public:
  IdleHandoff();
  ~IdleHandoff();  // runs what was pushed before, then stops
  IdleHandoff(const IdleHandoff&) = delete;
  IdleHandoff& operator=(const IdleHandoff&) = delete;

  // Lock-free and wait-free for the caller (one allocation, one CAS, one futex wake).
  void push(std::function<void()> work);

 private:
  struct Node {
    std::function<void()> work;
    Node* next = nullptr;
  };
  void loop();
  // Runs every pushed item, oldest first; false when nothing was there.
  bool drain();

  std::atomic<Node*> head_{nullptr};  // newest first
  std::atomic<unsigned> pushes_{0};   // the futex the thread sleeps on
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace perfhat::index
