// Control-flow shapes both lowerings emit the same way: if/else and short-circuit && / ||.
// The arms are callbacks so each lowering keeps its own context.
#pragma once
#include <functional>

#include <llvm/IR/IRBuilder.h>

namespace gpubt::codegen {

// if (COND) THEN_ARM else ELSE_ARM, in FN; the builder ends after both.
void emit_if_else(llvm::IRBuilder<> &b, llvm::Function *fn, llvm::Value *cond,
                  const std::function<void()> &then_arm, const std::function<void()> &else_arm);

// LHS && RHS() (IS_AND) or LHS || RHS(), RHS evaluated only when needed; i1 operands, i1 result.
llvm::Value *emit_short_circuit(llvm::IRBuilder<> &b, llvm::Function *fn, bool is_and,
                                llvm::Value *lhs, const std::function<llvm::Value *()> &rhs);

} // namespace gpubt::codegen
