// The layer's device maps while the program runs (issue 26; the record: runtime/abi/live_maps.h):
// the probes' memory is host-visible and coherent, so a thread of the layer's own reads it every
// period, with no Vulkan call and no wait for the GPU, and sends it to gpubt. No Vulkan calls.
#pragma once
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "runtime/abi/agent_protocol.h"

namespace gpubt::runtime::vulkan {

class LiveSender {
public:
  // Every PERIOD: COLLECT's images (it takes the layer's lock) as one record on socket FD, until
  // gpubt is gone or the sender is destroyed.
  LiveSender(std::chrono::milliseconds period, int fd, std::function<abi::AgentResults()> collect);
  ~LiveSender(); // stops and joins (do not hold COLLECT's lock)
  LiveSender(const LiveSender &) = delete;
  LiveSender &operator=(const LiveSender &) = delete;

private:
  void run();
  std::chrono::milliseconds period_;
  int fd_;
  std::function<abi::AgentResults()> collect_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

} // namespace gpubt::runtime::vulkan
