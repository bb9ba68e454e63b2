// An owned file descriptor, closed on destruction.
#pragma once
#include <unistd.h>
#include <utility>

namespace gpubt::runtime {

class UniqueFd {
public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd &&o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd &operator=(UniqueFd &&o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); } // the caller closes it now
  void reset() {
    if (fd_ >= 0)
      close(fd_);
    fd_ = -1;
  }

private:
  int fd_ = -1;
};

} // namespace gpubt::runtime
