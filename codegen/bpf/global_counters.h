// Counters in the globals map that BPF programs add to when a helper fails (a full ring buffer,
// a full map), so gpubt can say what was lost instead of losing it silently.
#pragma once
#include "codegen/bpf/lower_context.h"

namespace gpubt::codegen::bpf {

// Adds 1 to word SLOT of the globals map (abi::GlobalSlot) when RET (a helper's i64 result) is
// not 0.
void count_failure(LowerCtx &c, llvm::Value *ret, uint32_t slot);

} // namespace gpubt::codegen::bpf
