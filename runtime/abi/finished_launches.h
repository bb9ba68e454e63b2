// Which launches a process finished, when each started and ended (issue 25: launch-level probes
// without exit patches). With AgentConfig::time_launches the CUDA agent times every launch of a
// matching kernel on its stream and, once it finished, sends one FinishedLaunch for it, batched
// as ring records of kind EventKind::FinishedLaunches among its other records (the framing of
// runtime/abi/live_maps.h; attached, -p: one record per Events frame). Unlike RunningLaunches
// these are events: gpubt takes every one, in order, and runs the script's launch-level probes
// once per launch. Std only.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/abi/result.h"

namespace gpubt::abi {

struct FinishedLaunch {
  uint64_t seq = 0;      // the launch's number on its stream (1, 2, ...)
  uint64_t stream = 0;   // the CUstream handle (0: the legacy default stream)
  uint64_t start_ns = 0; // CLOCK_MONOTONIC: when the launch began running (launch_start)
  uint64_t end_ns = 0;   // CLOCK_MONOTONIC: when its last thread was done (`nsecs` at its end)
  // CLOCK_MONOTONIC: when the host's launch call began (launch_call; a graph's kernel nodes: the
  // graph launch's; an attached timing-mode agent: CUPTI's `queued`, inside the call); 0 where
  // the agent has none (runtime/cuda_agent/launch_timer.h)
  uint64_t call_ns = 0;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t device = 0;   // CUDA device ordinal
  std::string kernel;    // the kernel's mangled name as the driver gives it
};

struct FinishedLaunches {
  uint32_t pid = 0;
  uint64_t lost = 0; // launches the agent timed but could not send since its last record
  std::vector<FinishedLaunch> launches;
};

// A whole ring record (gpubt_ring_record, EventHeader, payload, padded to 8 bytes).
std::string finished_launches_record(const FinishedLaunches &r);

// As LiveMaps::take_from: takes every FinishedLaunches record among the whole records at the front
// of RECORDS out of it, handing each to EACH in order; the other records stay in order.
// Error: one that does not parse (the records before it were handed on, it is dropped).
Status take_finished_launches(std::vector<uint8_t> &records,
                              const std::function<void(const FinishedLaunches &)> &each);

} // namespace gpubt::abi
