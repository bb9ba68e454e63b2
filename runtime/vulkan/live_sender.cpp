#include "runtime/vulkan/live_sender.h"

#include <pthread.h>
#include <unistd.h>

#include "runtime/abi/live_maps.h"
#include "runtime/abi/send_all.h"

namespace gpubt::runtime::vulkan {

LiveSender::LiveSender(std::chrono::milliseconds period, int fd,
                       std::function<abi::AgentResults()> collect)
    : period_(period), fd_(fd), collect_(std::move(collect)), thread_([this] { run(); }) {}

LiveSender::~LiveSender() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void LiveSender::run() {
  pthread_setname_np(pthread_self(), "gpubt-maps");
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, period_, [&] { return stop_; })) {
    lock.unlock();
    uint64_t began = abi::live_clock_ns();
    abi::AgentResults images = collect_();
    std::string record =
        images.images.empty() ? "" : abi::live_maps_record(getpid(), images, began);
    bool sent = record.empty() || abi::send_all(fd_, record.data(), record.size());
    lock.lock();
    if (!sent)
      return; // gpubt is gone
  }
}

} // namespace gpubt::runtime::vulkan
