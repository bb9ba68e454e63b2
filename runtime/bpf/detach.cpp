// Parallel close of attachment fds.
#include "runtime/bpf/detach.h"

#include <algorithm>
#include <thread>

namespace gpubt::runtime {

void detach_all(std::vector<UniqueFd> &events) {
  constexpr size_t max_threads = 32;
  size_t n = std::min(events.size(), max_threads);
  if (n <= 1) {
    events.clear();
    return;
  }
  std::vector<std::thread> threads;
  for (size_t t = 0; t < n; ++t)
    threads.emplace_back([&events, t, n] {
      for (size_t i = t; i < events.size(); i += n)
        events[i].reset();
    });
  for (auto &th : threads)
    th.join();
  events.clear();
}

} // namespace gpubt::runtime
