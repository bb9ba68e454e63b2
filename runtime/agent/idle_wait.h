// Waiting, with a time limit, for what a process's GPUs run to finish. cuCtxSynchronize has no
// limit: a persistent kernel (or a hung one) would block the waiting thread for ever, and the
// launching thread that waits for an idle GPU before patching holds every other launch meanwhile.
#pragma once

#include <chrono>
#include <vector>

#include <cuda.h>

namespace gpubt::agent {

// True when the work queued in CONTEXTS before the call finished within LIMIT. The
// synchronization runs on a thread of its own (named gpubt-idle: host probes on the CUDA
// libraries skip it); on false it stays blocked there until the work ends, harmlessly.
bool wait_for_idle(const std::vector<CUcontext> &contexts, std::chrono::milliseconds limit);
// True on a waiting thread: the agent's callbacks ignore the driver calls made there.
bool on_idle_thread();

} // namespace gpubt::agent
