// An aggregation's value over all CPUs (see percpu_value.h).
#include "codegen/bpf/percpu_value.h"

#include <linux/bpf.h>

#include "codegen/bpf/ir_helpers.h"

namespace gpubt::codegen::bpf {

using frontend::Type;
using frontend::TypeKind;

namespace {

llvm::Value *load_word(LowerCtx &c, llvm::Value *p, uint32_t i) {
  return c.b.CreateAlignedLoad(c.b.getInt64Ty(), c.byte_ptr(p, 8 * i), llvm::Align(8));
}

// Folds one CPU's value at P into VAL (and SECOND: avg's count, min/max's "set").
void fold_cpu(LowerCtx &c, const Type &vt, llvm::Value *p, llvm::Value *val,
              llvm::Value *second) {
  auto &b = c.b;
  auto *i64 = b.getInt64Ty();
  llvm::Value *cur = b.CreateLoad(i64, val);
  llvm::Value *word = load_word(c, p, 0);
  switch (vt.kind) {
  case TypeKind::Count:
  case TypeKind::Sum:
    b.CreateStore(b.CreateAdd(cur, word), val);
    break;
  case TypeKind::Avg:
    b.CreateStore(b.CreateAdd(cur, word), val);
    b.CreateStore(b.CreateAdd(b.CreateLoad(i64, second), load_word(c, p, 1)), second);
    break;
  case TypeKind::Min:
  case TypeKind::Max: {
    // A CPU whose word 1 is 0 never saw a value; the first one that did is taken as it is.
    bool is_min = vt.kind == TypeKind::Min;
    llvm::Value *better = vt.is_signed
                              ? (is_min ? b.CreateICmpSLT(word, cur) : b.CreateICmpSGT(word, cur))
                              : (is_min ? b.CreateICmpULT(word, cur) : b.CreateICmpUGT(word, cur));
    llvm::Value *have = b.CreateICmpNE(b.CreateLoad(i64, second), b.getInt64(0));
    llvm::Value *cpu_set = b.CreateICmpNE(load_word(c, p, 1), b.getInt64(0));
    llvm::Value *take = b.CreateAnd(cpu_set, b.CreateOr(b.CreateNot(have), better));
    b.CreateStore(b.CreateSelect(take, word, cur), val);
    b.CreateStore(b.CreateSelect(take, b.getInt64(1), b.CreateLoad(i64, second)), second);
    break;
  }
  default:
    c.set_error("BUG: per-CPU value of an aggregation of type " + frontend::to_string(vt));
    break;
  }
}

// TOTAL / COUNT, unsigned division as BPF v3 has it, the sign put back for a signed avg;
// 0 for a count of 0.
llvm::Value *average(LowerCtx &c, const Type &vt, llvm::Value *total, llvm::Value *count) {
  auto &b = c.b;
  llvm::Value *zero = b.getInt64(0);
  llvm::Value *is_zero = b.CreateICmpEQ(count, zero);
  llvm::Value *safe = b.CreateSelect(is_zero, b.getInt64(1), count);
  llvm::Value *negative = vt.is_signed ? b.CreateICmpSLT(total, zero) : b.getFalse();
  llvm::Value *magnitude = b.CreateSelect(negative, b.CreateNeg(total), total);
  llvm::Value *q = b.CreateUDiv(magnitude, safe);
  return b.CreateSelect(is_zero, zero, b.CreateSelect(negative, b.CreateNeg(q), q));
}

} // namespace

llvm::Value *percpu_aggregate_value(LowerCtx &c, int map_index, const Type &vt,
                                    llvm::Value *key, uint32_t num_cpus) {
  auto &b = c.b;
  auto *i64 = b.getInt64Ty();
  llvm::Value *val = stack_i64(c);
  llvm::Value *second = stack_i64(c);
  llvm::Value *cpu = stack_i64(c);
  b.CreateStore(b.getInt64(0), val);
  b.CreateStore(b.getInt64(0), second);
  b.CreateStore(b.getInt64(0), cpu);
  auto *cond = llvm::BasicBlock::Create(c.ctx, "percpu.cond", c.fn);
  auto *body = llvm::BasicBlock::Create(c.ctx, "percpu.body", c.fn);
  auto *fold = llvm::BasicBlock::Create(c.ctx, "percpu.fold", c.fn);
  auto *done = llvm::BasicBlock::Create(c.ctx, "percpu.done", c.fn);
  b.CreateBr(cond);

  b.SetInsertPoint(cond);
  llvm::Value *i = b.CreateLoad(i64, cpu);
  b.CreateCondBr(b.CreateICmpULT(i, b.getInt64(num_cpus)), body, done);

  b.SetInsertPoint(body);
  llvm::Value *p = call_helper(c, BPF_FUNC_map_lookup_percpu_elem,
                               {map_ref(c, map_index), key, b.CreateTrunc(i, b.getInt32Ty())},
                               b.getPtrTy());
  b.CreateCondBr(b.CreateIsNull(p), done, fold); // past the kernel's last CPU

  b.SetInsertPoint(fold);
  fold_cpu(c, vt, p, val, second);
  b.CreateStore(b.CreateAdd(i, b.getInt64(1)), cpu);
  b.CreateBr(cond);

  b.SetInsertPoint(done);
  llvm::Value *v = b.CreateLoad(i64, val);
  return vt.kind == TypeKind::Avg ? average(c, vt, v, b.CreateLoad(i64, second)) : v;
}

} // namespace gpubt::codegen::bpf
