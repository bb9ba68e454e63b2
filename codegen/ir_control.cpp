// if/else and short-circuit operators (see ir_control.h).
#include "codegen/ir_control.h"

namespace gpubt::codegen {

void emit_if_else(llvm::IRBuilder<> &b, llvm::Function *fn, llvm::Value *cond,
                  const std::function<void()> &then_arm, const std::function<void()> &else_arm) {
  auto &ctx = fn->getContext();
  auto *then_bb = llvm::BasicBlock::Create(ctx, "if.then", fn);
  auto *else_bb = llvm::BasicBlock::Create(ctx, "if.else", fn);
  auto *done = llvm::BasicBlock::Create(ctx, "if.done", fn);
  b.CreateCondBr(cond, then_bb, else_bb);
  b.SetInsertPoint(then_bb);
  then_arm();
  b.CreateBr(done);
  b.SetInsertPoint(else_bb);
  if (else_arm)
    else_arm();
  b.CreateBr(done);
  b.SetInsertPoint(done);
}

llvm::Value *emit_short_circuit(llvm::IRBuilder<> &b, llvm::Function *fn, bool is_and,
                                llvm::Value *lhs, const std::function<llvm::Value *()> &rhs) {
  auto &ctx = fn->getContext();
  llvm::BasicBlock *lhs_end = b.GetInsertBlock();
  auto *rhs_bb = llvm::BasicBlock::Create(ctx, is_and ? "and.rhs" : "or.rhs", fn);
  auto *done = llvm::BasicBlock::Create(ctx, "logic.done", fn);
  if (is_and)
    b.CreateCondBr(lhs, rhs_bb, done);
  else
    b.CreateCondBr(lhs, done, rhs_bb);
  b.SetInsertPoint(rhs_bb);
  llvm::Value *r = rhs();
  llvm::BasicBlock *rhs_end = b.GetInsertBlock();
  b.CreateBr(done);
  b.SetInsertPoint(done);
  auto *phi = b.CreatePHI(b.getInt1Ty(), 2);
  phi->addIncoming(b.getInt1(!is_and), lhs_end);
  phi->addIncoming(r, rhs_end);
  return phi;
}

} // namespace gpubt::codegen
