// Parallel close of attachment fds.
#include "runtime/bpf/detach.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace gpubt::runtime {

void detach_all(std::vector<UniqueFd> &events, Progress *progress, size_t probes) {
  constexpr size_t max_threads = 32;
  size_t n = std::min(events.size(), max_threads);
  if (n <= 1) {
    events.clear();
    return;
  }
  const size_t total = events.size();
  std::atomic<size_t> closed{0};
  std::mutex m;
  std::condition_variable all_closed;
  std::vector<std::thread> threads;
  for (size_t t = 0; t < n; ++t)
    threads.emplace_back([&, t] {
      for (size_t i = t; i < total; i += n) {
        events[i].reset();
        if (++closed == total) {
          std::lock_guard lock(m);
          all_closed.notify_one();
        }
      }
    });
  if (progress) { // this thread tells how far the others are
    progress->expect(probes);
    size_t told = 0;
    std::unique_lock lock(m);
    for (bool last = false; !last;) {
      last = closed == total || all_closed.wait_for(lock, std::chrono::milliseconds(100),
                                                    [&] { return closed == total; });
      size_t now = closed * probes / total;
      progress->done(now - told);
      told = now;
    }
    progress->finish();
  }
  for (auto &th : threads)
    th.join();
  events.clear();
}

} // namespace gpubt::runtime
