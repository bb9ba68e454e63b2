// What this machine has for each attach point of a script (tracefs, binaries' symbols, the GPU
// API catalog), for frontend::check_attach_points.
#pragma once
#include "frontend/passes/check_attach_points.h"

namespace gpubt::driver {

// PID > 0 (-p): uprobe targets are left to the attach, which reads the process's own files.
// FUNCTIONS false (--dry-run: a script checked away from the machine it will trace): a uprobe's
// file must exist, as bpftrace checks, but not its function.
frontend::AttachPointLookup attach_point_lookup(int pid, bool functions);

// "did you mean 'cudaMalloc'?" or "it is in cuda: uprobe:cuda:cuMemAlloc" for a catalogued GPU
// library alias TARGET and a FUNC it has not; empty if nothing near.
std::string gpu_function_hint(const std::string &target, const std::string &func);

// A uprobe's FUNC missing from TARGET: gpu_function_hint for a GPU library alias, else the few
// nearest ELF function symbols of the file TARGET names (for process PID when > 0), as
// "did you mean 'a' or 'b'?"; empty if nothing near.
std::string uprobe_function_hint(const std::string &target, const std::string &func, int pid);

} // namespace gpubt::driver
