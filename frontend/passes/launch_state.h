// Per-launch builtins across probes: `last_thread` counts the threads leaving a launch, so only
// one gpu probe (with one attach point) may use it, or the same threads would be counted twice.
#pragma once
#include "frontend/ast.h"
#include "frontend/diagnostics.h"

namespace gpubt::frontend {

// Reports a second use of last_thread (another probe, or a probe with several attach points).
// Runs after resolve_types, whose builtin ids it reads; codegen relies on it.
// Block probes keep one word per running block (device_abi.h block_slots), claimed by its first
// thread in and freed by its last out: one gpu:block_begin and one gpu:block_end attach point at
// most, on one kernel pattern, or two patterns matching one kernel would claim it twice.
void check_launch_state(const Program &program, Diagnostics &diags);

} // namespace gpubt::frontend
