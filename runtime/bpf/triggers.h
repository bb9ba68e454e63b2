// BEGIN, END and gpu:hang: raw tracepoint programs run when the session says, through
// BPF_PROG_TEST_RUN in gpubt's own context (pid and comm are gpubt's, as in bpftrace). bpftrace
// attaches uprobes to functions of its own instead; each uprobe detach waits for an RCU grace
// period (~100 ms here), which was most of a short run's time.
#pragma once
#include <cstddef>

#include "runtime/abi/result.h"

namespace gpubt::runtime {

// CTX: the program's context (BEGIN/END: none, an argument array of one 0 word; gpu:hang:
// abi::HangCtx), at most 12 words.
Status run_once(int prog_fd, const void *ctx = nullptr, size_t ctx_size = 0);

} // namespace gpubt::runtime
