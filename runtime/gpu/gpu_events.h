// The -c agent's printf records, read on a thread of their own from the run's events socket (so
// the agent, whose send blocks, never waits while gpubt runs a system() or prints a map). The
// tracer's loop polls ready_fd() and takes what came.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/abi/unique_fd.h"

namespace gpubt::runtime {

class GpuEventReader {
public:
  // FD: the run's end of the events socket (GpuRun::events); nothing happens when it is -1.
  explicit GpuEventReader(int fd);
  ~GpuEventReader();
  GpuEventReader(const GpuEventReader &) = delete;
  GpuEventReader &operator=(const GpuEventReader &) = delete;

  int ready_fd() const { return ready_.get(); } // readable once records came; -1 without a socket
  std::vector<uint8_t> take();                  // what came so far
  std::vector<uint8_t> stop();                  // ends the thread, reads what is left, takes all

private:
  int fd_;
  UniqueFd ready_; // an eventfd
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<uint8_t> bytes_;
  std::thread thread_;
};

} // namespace gpubt::runtime
