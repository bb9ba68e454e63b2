// Which contexts' live-copy preparations (live_copier.h prepare_live_copies) are asked and not
// done, so that the program's first launch in each waits for its own (why: live_copier.cpp).
// A context is asked at its creation, begun and ended by the copier's thread, waited for by the
// program's launches, and forgotten at its destruction. Std only (tested without a GPU).
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <map>
#include <mutex>

namespace gpubt::agent {

class PrepareQueue {
public:
  // WAIT: the most a launch waits (await) for a preparation.
  explicit PrepareQueue(std::chrono::milliseconds wait) : wait_(wait) {}

  void ask(void *ctx);
  // The copier's thread: the next asked context, now under way; null if none.
  void *begin();
  // The copier's thread: CTX's preparation is over. False if CTX was forgotten meanwhile (a new
  // context may get its handle: what the preparation made is to be dropped).
  bool end(void *ctx);
  // CTX is being destroyed: an asked one is dropped; one under way is waited for up to LIMIT
  // (its driver calls may wait for this destruction), then left for end() to report.
  void forget(void *ctx, std::chrono::milliseconds limit);
  // Before a launch in CTX: returns at once unless CTX is asked or under way; then waits for it
  // at most the queue's WAIT, and drops it if it has not begun by then. True: ready (or never
  // asked); false: not prepared in time.
  bool await(void *ctx);
  // Every asked one that has not begun is dropped (the copier's thread ends).
  void drop_asked();

private:
  enum class State { Asked, Running, Forgotten }; // Forgotten: destroyed while Running
  void counted() { count_.store(states_.size(), std::memory_order_release); }
  std::chrono::milliseconds wait_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<void *, State> states_;
  std::atomic<size_t> count_{0}; // states_.size(), read without mu_ at every launch
};

} // namespace gpubt::agent
