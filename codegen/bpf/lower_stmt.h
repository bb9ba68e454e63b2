// Statements and blocks -> IR, in the current probe function.
#pragma once
#include "codegen/bpf/lower_context.h"

namespace gpubt::codegen::bpf {

void lower_stmt(LowerCtx &c, const frontend::Stmt &s);
void lower_block(LowerCtx &c, const frontend::BlockStmt &block);

} // namespace gpubt::codegen::bpf
