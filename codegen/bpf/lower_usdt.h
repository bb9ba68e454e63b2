// argN of a usdt probe: read where its site's note says (a register, memory at register +
// displacement [+ index * scale], or a constant), sized and sign-extended as the spec says.
#pragma once
#include "codegen/bpf/lower_context.h"

namespace gpubt::codegen::bpf {

// c.usdt must be set. An N past the site's arguments is an error.
llvm::Value *usdt_arg(LowerCtx &c, int n);

} // namespace gpubt::codegen::bpf
