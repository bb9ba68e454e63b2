#include "runtime/cuda_agent/live_prepare.h"

namespace gpubt::agent {

void PrepareQueue::ask(void *ctx) {
  std::lock_guard<std::mutex> lock(mu_);
  states_[ctx] = State::Asked;
  counted();
}

void *PrepareQueue::begin() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto &[ctx, state] : states_)
    if (state == State::Asked) {
      state = State::Running;
      return ctx;
    }
  return nullptr;
}

bool PrepareQueue::end(void *ctx) {
  bool forgotten;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = states_.find(ctx);
    forgotten = it == states_.end() || it->second == State::Forgotten;
    if (it != states_.end())
      states_.erase(it);
    counted();
  }
  cv_.notify_all();
  return !forgotten;
}

void PrepareQueue::forget(void *ctx, std::chrono::milliseconds limit) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = states_.find(ctx);
  if (it == states_.end())
    return;
  if (it->second == State::Asked) {
    states_.erase(it);
  } else if (!cv_.wait_for(lock, limit, [&] { return !states_.count(ctx); })) {
    states_[ctx] = State::Forgotten;
  }
  counted();
  cv_.notify_all(); // a launch waiting for it has nothing to wait for now
}

bool PrepareQueue::await(void *ctx) {
  if (!count_.load(std::memory_order_acquire))
    return true;
  std::unique_lock<std::mutex> lock(mu_);
  auto pending = [&] {
    auto it = states_.find(ctx);
    return it != states_.end() && it->second != State::Forgotten;
  };
  if (cv_.wait_for(lock, wait_, [&] { return !pending(); }))
    return true;
  if (states_[ctx] == State::Asked) { // too late now: the program's kernels may run from here on
    states_.erase(ctx);
    counted();
  }
  return false;
}

void PrepareQueue::drop_asked() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::erase_if(states_, [](const auto &s) { return s.second == State::Asked; });
    counted();
  }
  cv_.notify_all();
}

} // namespace gpubt::agent
