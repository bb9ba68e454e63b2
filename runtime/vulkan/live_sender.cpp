#include "runtime/vulkan/live_sender.h"

#include <cerrno>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runtime/abi/live_maps.h"

namespace gpubt::runtime::vulkan {
namespace {

bool send_all(int fd, const std::string &bytes) {
  for (size_t done = 0; done < bytes.size();) {
    // MSG_NOSIGNAL: gpubt gone must not kill the program with SIGPIPE.
    ssize_t n = send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += size_t(n);
  }
  return true;
}

} // namespace

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
    abi::AgentResults images = collect_();
    bool sent = images.images.empty() || send_all(fd_, abi::live_maps_record(getpid(), images));
    lock.lock();
    if (!sent)
      return; // gpubt is gone
  }
}

} // namespace gpubt::runtime::vulkan
