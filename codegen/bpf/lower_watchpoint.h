// watchpoint:FUNC+argN: the hidden uprobe on FUNC that reports argN's address for the
// watchpoint probe, and stops the process until it is watched (bpftrace's setup probe).
#pragma once
#include "codegen/bpf/lower_context.h"

namespace gpubt::codegen::bpf {

// The setup program's body: a WatchpointAttach event naming probe WATCH_INDEX with argN, then
// SIGSTOP to the process unless ASYNC (the runtime sends SIGCONT once the watchpoint is set).
void lower_watchpoint_setup(LowerCtx &c, uint32_t watch_index, int arg, bool async);

} // namespace gpubt::codegen::bpf
