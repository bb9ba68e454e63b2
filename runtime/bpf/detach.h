// Closes many perf events and BPF links at once.
#pragma once
#include <cstddef>
#include <vector>

#include "runtime/abi/unique_fd.h"
#include "runtime/bpf/progress.h"

namespace gpubt::runtime {

// Each uprobe detach waits for an RCU grace period (tens of ms here); closing from several
// threads lets those waits overlap, so ten probes detach in about the time of one. PROGRESS
// (null: none) hears of PROBES probes, done in proportion to the events closed.
void detach_all(std::vector<UniqueFd> &events, Progress *progress = nullptr, size_t probes = 0);

} // namespace gpubt::runtime
