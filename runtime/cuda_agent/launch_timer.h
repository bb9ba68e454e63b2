// Every kernel launch of the process timed by CUPTI's kernel activity records (issue 25: the
// launch-level probes gpubt runs on the host, `gpu:kretprobe:* /last_thread/ { ... }` among
// them, without patching any kernel). The times are the GPU's own, as the PyTorch profiler and
// Nsight Systems report them (CUPTI puts them on CLOCK_MONOTONIC here), one record per kernel,
// per kernel node of a CUDA graph replay too. Every period the records CUPTI has are sent as
// one FinishedLaunches record (runtime/abi/finished_launches.h); stop() sends the rest.
//
// CUPTI and the Compute Sanitizer cannot both be in a process: once the Sanitizer subscribed,
// even after it unsubscribed, CUPTI's activity API refuses to start (error 39) and, CUPTI
// started first, the Sanitizer sees no launch (bench/gpu/experiments/sanitizer_cupti_switch.cu).
// So the timer is for a process where the Sanitizer never subscribes: a -c run whose gpu probes
// all run on the host, and a job started with the agent in timing mode (GPUBT_AGENT_MODE=timing,
// timing_session.cpp), timed from each attach to its detach. libcupti is loaded at the first
// start: the process's own if it has one, else GPUBT_CUPTI_PATH, CUDA's, or the loader's.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/abi/finished_launches.h"
#include "runtime/cuda_agent/launch_calls.h"
#include "runtime/cuda_agent/periodic_thread.h"

namespace gpubt::agent {

class LaunchTimer {
public:
  // SEND: one record for gpubt; false when gpubt is gone.
  using Send = std::function<bool(const std::string &record)>;
  ~LaunchTimer() { stop(); }

  // Each launch's call time (its launch_call; else 0): from CUPTI's records of the launch calls
  // (launch_calls.h), which came only where CUPTI started before the process's first CUDA call
  // (-c: the H200, 2026-11-29; started in a running job, by an attach, none came), or from the
  // launch calls' enter callbacks (callback API; for an attach), or from each kernel record's
  // `queued` time (about 1.2 us more a launch on the H200's training step), which is also where
  // the first two cannot be had.
  enum class CallTimes { None, FromCallRecords, FromCallbacks, Queued };
  // Timing from now on: "" or why not. Again after a stop: the launches from then on.
  std::string start(std::chrono::milliseconds period, Send send, CallTimes calls);
  // Every launch finished so far is sent; then nothing more.
  void stop();
  // Where this timing's launch_call values come from (None: every one is 0).
  CallTimes call_times() const { return calls_from_; }
  static const char *describe(CallTimes calls);

  // CUPTI's buffer callbacks (C functions without a user pointer: the process's one timer).
  void take_buffer(uint8_t *buffer, size_t valid);
  // A launch call's enter callback (on the launching thread: kept short, under its own lock).
  void called(uint32_t correlation, uint64_t start_ns, bool graph);

private:
  bool send_taken();
  void take_called(); // under mu_: the enter callbacks' calls into calls_
  bool matches_calls() const {
    return calls_from_ == CallTimes::FromCallRecords || calls_from_ == CallTimes::FromCallbacks;
  }

  std::mutex mu_;
  Send send_;
  abi::FinishedLaunches pending_;
  CallTimes calls_from_ = CallTimes::None;
  LaunchCalls calls_;
  struct Called {
    uint32_t correlation;
    uint64_t start_ns;
    bool graph;
  };
  std::mutex called_mu_;
  std::vector<Called> called_;
  bool active_ = false;
  PeriodicThread sender_;
};

} // namespace gpubt::agent
