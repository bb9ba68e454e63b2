// Closes many perf events and BPF links at once.
#pragma once
#include <vector>

#include "runtime/abi/unique_fd.h"

namespace gpubt::runtime {

// Each uprobe detach waits for an RCU grace period (tens of ms here); closing from several
// threads lets those waits overlap, so ten probes detach in about the time of one.
void detach_all(std::vector<UniqueFd> &events);

} // namespace gpubt::runtime
