// Pointers in host probes: `*p` reads the pointee (user memory in uprobes, kernel memory
// elsewhere, as bpftrace chooses), and arithmetic on a pointer counts in pointee sizes.
#pragma once
#include "codegen/bpf/lower_context.h"
#include "frontend/ast.h"

namespace gpubt::codegen::bpf {

// *operand: e.type's bytes at the address; 0 if unreadable.
Val lower_deref(LowerCtx &c, const frontend::UnaryExpr &e);

// How many bytes one step of pointer type `t` moves (the pointee's size); 1 for non-pointers.
uint32_t pointer_step(const frontend::Type &t);

} // namespace gpubt::codegen::bpf
