// BEGIN and END run as uprobes on these two functions of gpubt itself, which the session calls
// (bpftrace's approach: the program sees a normal probe context and runs exactly once).
#pragma once
#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"
#include "runtime/symbols.h"

extern "C" void gpubt_begin_trigger();
extern "C" void gpubt_end_trigger();

namespace gpubt::runtime {

// Where the trigger for KIND (Begin or End) lives in this process's executable file.
Result<UprobeTarget> trigger_target(abi::AttachKind kind);

// Calls the trigger for KIND (Begin or End).
void fire_trigger(abi::AttachKind kind);

} // namespace gpubt::runtime
