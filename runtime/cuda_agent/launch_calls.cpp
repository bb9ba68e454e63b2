#include "runtime/cuda_agent/launch_calls.h"

#include <algorithm>
#include <utility>

namespace gpubt::agent {

void LaunchCalls::called(uint32_t correlation, uint64_t start_ns, bool graph) {
  auto [it, added] = calls_.try_emplace(correlation, Call{start_ns, graph});
  if (!added) {
    it->second.start_ns = std::min(it->second.start_ns, start_ns);
    it->second.graph = it->second.graph || graph;
    return;
  }
  order_.push_back(correlation);
  while (order_.size() > kMaxCalls) {
    calls_.erase(order_.front());
    order_.pop_front();
  }
}

bool LaunchCalls::fill(abi::FinishedLaunch &l) {
  auto it = calls_.find(uint32_t(l.seq));
  if (it == calls_.end())
    return false;
  l.call_ns = it->second.start_ns;
  if (!it->second.graph) // one kernel a call (its id stays in order_ until it ages out)
    calls_.erase(it);
  return true;
}

void LaunchCalls::finished(abi::FinishedLaunch l, std::vector<abi::FinishedLaunch> &out) {
  if (fill(l))
    out.push_back(std::move(l));
  else
    held_.push_back({std::move(l), 0});
}

void LaunchCalls::settle(std::vector<abi::FinishedLaunch> &out) {
  std::vector<Held> still;
  for (Held &h : held_) {
    if (fill(h.launch) || ++h.sends > kHeldSends) {
      out.push_back(std::move(h.launch)); // unmatched: call_ns stays 0
    } else {
      still.push_back(std::move(h));
    }
  }
  held_ = std::move(still);
}

void LaunchCalls::drain(std::vector<abi::FinishedLaunch> &out) {
  for (Held &h : held_) {
    fill(h.launch);
    out.push_back(std::move(h.launch));
  }
  *this = LaunchCalls{};
}

} // namespace gpubt::agent
