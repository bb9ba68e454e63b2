// The events socket's reader (see gpu_events.h).
#include "runtime/gpu/gpu_events.h"

#include <cerrno>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gpubt::runtime {
namespace {

// Reads what is there now into INTO; false at EOF or error.
bool read_some(int fd, std::vector<uint8_t> &into) {
  uint8_t buf[65536];
  ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
  if (n > 0)
    into.insert(into.end(), buf, buf + n);
  return n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR));
}

} // namespace

GpuEventReader::GpuEventReader(int fd) : fd_(fd) {
  if (fd_ < 0)
    return;
  ready_ = UniqueFd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  thread_ = std::thread([this] {
    std::vector<uint8_t> got;
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0)
        continue;
      bool open = read_some(fd_, got);
      if (!got.empty()) {
        std::lock_guard<std::mutex> lock(mu_);
        bytes_.insert(bytes_.end(), got.begin(), got.end());
        got.clear();
        uint64_t one = 1;
        (void)!write(ready_.get(), &one, sizeof one);
      }
      if (!open)
        return;
    }
  });
}

GpuEventReader::~GpuEventReader() { stop(); }

std::vector<uint8_t> GpuEventReader::take() {
  uint64_t count;
  if (ready_.valid())
    (void)!read(ready_.get(), &count, sizeof count);
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<uint8_t> out;
  out.swap(bytes_);
  return out;
}

std::vector<uint8_t> GpuEventReader::stop() {
  stop_ = true;
  if (thread_.joinable())
    thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  while (fd_ >= 0) { // what the agent sent before the thread saw the stop
    size_t before = bytes_.size();
    if (!read_some(fd_, bytes_) || bytes_.size() == before)
      break;
  }
  std::vector<uint8_t> out;
  out.swap(bytes_);
  return out;
}

} // namespace gpubt::runtime
