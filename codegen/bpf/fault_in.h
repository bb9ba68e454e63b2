// Sleepable uprobes: fault in the user pages str() reads before reading them.
#pragma once
#include "codegen/bpf/lower_context.h"

namespace gpubt::codegen::bpf {

// Emits bpf_copy_from_user touches for every str() whose pointer is a side-effect-free
// expression (arg0, retval, args.x, ...) in a uprobe/uretprobe. Returns whether it did: the
// program must then be loaded sleepable.
bool fault_in_user_strings(LowerCtx &c);

} // namespace gpubt::codegen::bpf
