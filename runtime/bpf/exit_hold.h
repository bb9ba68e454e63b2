// Holds a traced process (-c/-p) at exit() until its mappings are saved: one that runs for a few
// milliseconds (a CUDA test without a GPU) is gone before the event loop reads /proc/PID/maps,
// and kname()/usym values printed at the end need them.
#pragma once
#include "runtime/abi/result.h"
#include "runtime/abi/unique_fd.h"
#include <vector>

namespace gpubt::runtime {

// A uprobe on libc's exit() in process PID that SIGSTOPs it (bpf_send_signal). Keep the fds:
// closing them detaches.
Result<std::vector<UniqueFd>> hold_at_exit(int pid);

// The same stop at the entry of FUNC in TARGET (a path or a library name) in process PID.
Result<std::vector<UniqueFd>> hold_at(int pid, const std::string &target, const std::string &func);

// The same stop where FUNC returns to a caller outside it: the outermost of nested calls (a
// process-wide depth count, for the calls of one thread at a time).
Result<std::vector<UniqueFd>> hold_after_outermost(int pid, const std::string &target,
                                                   const std::string &func);

// If PID is stopped (held at exit): snapshots its mappings and lets it go on. Returns whether
// it was held.
bool release_held(int pid);

// The state letter of /proc/PID/stat: 'T' when stopped, '?' when PID is gone.
char process_state(int pid);

} // namespace gpubt::runtime
