// Each launch's call time for the launch timer (launch_timer.h) from CUPTI's records of the
// launch calls themselves (cudaLaunchKernel*, cuLaunchKernel*, cuGraphLaunch..., one API record
// each), matched to the kernel records by CUPTI's correlation id: what CUPTI's queued
// timestamps gave before, without their cost on every launch (issue 25: launchlate). A kernel
// whose call's record has not come yet is held a few sends; one never matched goes with
// call_ns 0 (launch_call unknown). Std only.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "runtime/abi/finished_launches.h"

namespace gpubt::agent {

class LaunchCalls {
public:
  // Calls kept unmatched (a failed launch has none; a graph launch's stays for its every
  // kernel node): beyond them the oldest go.
  static constexpr size_t kMaxCalls = 1 << 18;
  // Sends a finished launch waits for its call's record before it goes without it.
  static constexpr int kHeldSends = 2;

  // A launch call, CUPTI's correlation id CORRELATION, began at START_NS. GRAPH: a graph's
  // launch, whose kernel nodes all carry its id. A call seen twice (a runtime call's driver
  // call under it, where CUPTI gives them one id) keeps the earlier start.
  void called(uint32_t correlation, uint64_t start_ns, bool graph);
  // L finished (L.seq: its correlation id): into OUT with its call_ns if its call is known,
  // else held.
  void finished(abi::FinishedLaunch l, std::vector<abi::FinishedLaunch> &out);
  // Before each send: the held launches whose call came go to OUT; those held kHeldSends sends
  // go with call_ns 0.
  void settle(std::vector<abi::FinishedLaunch> &out);
  // The timing stops: every held launch to OUT (with its call if it came), the calls forgotten.
  void drain(std::vector<abi::FinishedLaunch> &out);
  size_t held() const { return held_.size(); }

private:
  bool fill(abi::FinishedLaunch &l);

  struct Call {
    uint64_t start_ns;
    bool graph;
  };
  std::unordered_map<uint32_t, Call> calls_;
  std::deque<uint32_t> order_; // calls_'s ids, oldest first (some already matched)
  struct Held {
    abi::FinishedLaunch launch;
    int sends;
  };
  std::vector<Held> held_;
};

} // namespace gpubt::agent
