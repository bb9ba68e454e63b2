// Which kernels a process has running now (issue 26: in-flight launches, hangs named). Every live
// period the CUDA agent sends, per stream that has launches not known to be complete, the oldest
// of them, as one ring record of kind EventKind::RunningLaunches among its other records (the
// framing of runtime/abi/live_maps.h). gpubt keeps the latest per process. Std only.
//
// How the CUDA agent knows (runtime/cuda_agent/launch_watch.h): it numbers the launches of each
// stream and asks the stream itself to write each launch's number into host memory once it
// finished (a stream memory operation after the launch, no host sync). The launch after the
// last finished one is running now (`exact`; an agent that marks only some launches would send
// the first after the last marked one with `exact` false and how many follow it in `later`).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "runtime/abi/result.h"

namespace gpubt::abi {

struct RunningLaunch {
  uint64_t seq = 0;      // the launch's number on its stream (1, 2, ...)
  uint64_t stream = 0;   // the CUstream handle (0: the legacy default stream)
  uint64_t since_ns = 0; // CLOCK_MONOTONIC: when it started as the agent saw it (launched then,
                       // or the launch before it seen finished: up to one period late)
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t device = 0;   // CUDA device ordinal
  uint32_t later = 0;    // launches queued on the stream after it, not known to have run
  bool exact = false;    // the stream is known to be running this launch (not one after it)
  uint32_t graph_kernels = 0; // a CUDA graph replay: its kernel nodes (kernel: the first); 0: not
  std::string kernel;    // the kernel's mangled name as the driver gives it
};

struct RunningLaunches {
  uint32_t pid = 0;
  uint64_t sent_ns = 0; // CLOCK_MONOTONIC when the agent looked
  std::vector<RunningLaunch> launches;
};

// A whole ring record (gpubt_ring_record, EventHeader, payload, padded to 8 bytes).
std::string running_launches_record(const RunningLaunches &r);

// The latest RunningLaunches of each process, taken out of a stream of ring records.
class RunningTable {
public:
  // As LiveMaps::take_from: takes every RunningLaunches record among the whole records at the
  // front of RECORDS out of it; the others stay in order. Error: one that does not parse.
  // EACH (if set) sees every record taken, in order (a batch may hold several of a process).
  Status take_from(std::vector<uint8_t> &records,
                   const std::function<void(const RunningLaunches &)> &each = {});
  const std::map<uint32_t, RunningLaunches> &latest() const { return latest_; }
  void forget(uint32_t pid) { latest_.erase(pid); }

private:
  std::map<uint32_t, RunningLaunches> latest_;
};

} // namespace gpubt::abi
