// BEGIN and END: raw tracepoint programs run exactly once, when the session says, through
// BPF_PROG_TEST_RUN in gpubt's own context (pid and comm are gpubt's, as in bpftrace). bpftrace
// attaches uprobes to functions of its own instead; each uprobe detach waits for an RCU grace
// period (~100 ms here), which was most of a short run's time.
#pragma once
#include "runtime/abi/result.h"

namespace gpubt::runtime {

Status run_once(int prog_fd);

} // namespace gpubt::runtime
