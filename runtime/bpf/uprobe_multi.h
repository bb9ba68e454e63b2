// uprobe_multi links (kernel 6.6+): many uprobes of one file behind one link, registered and,
// above all, unregistered in one batch (closing thousands of perf-event uprobes one by one
// costs an RCU grace period each: minutes).
#pragma once
#include "runtime/abi/result.h"
#include "runtime/abi/unique_fd.h"
#include <cstdint>
#include <string>
#include <vector>

namespace gpubt::runtime {

// BPF_TRACE_UPROBE_MULTI, missing from older uapi headers.
constexpr unsigned bpf_trace_uprobe_multi = 48;

// Whether this kernel loads programs for uprobe_multi links (probed once).
bool uprobe_multi_supported();

// One link running PROG_FD at every file offset of PATH; PID > 0 limits it to that process.
// The error message is errno's (the caller says which probe).
// cookies: empty, or one per offset (bpf_get_attach_cookie in the program).
Result<UniqueFd> attach_uprobe_multi(int prog_fd, const std::string &path,
                                     const std::vector<uint64_t> &offsets, bool retprobe, int pid,
                                     const std::vector<uint64_t> &cookies = {});

} // namespace gpubt::runtime
