#include "codegen/bpf/global_counters.h"

#include <linux/bpf.h>

#include "codegen/bpf/ir_helpers.h"

namespace gpubt::codegen::bpf {

void count_failure(LowerCtx &c, llvm::Value *ret, uint32_t slot) {
  auto *failed = llvm::BasicBlock::Create(c.ctx, "failed", c.fn);
  auto *add = llvm::BasicBlock::Create(c.ctx, "failed.count", c.fn);
  auto *done = llvm::BasicBlock::Create(c.ctx, "failed.done", c.fn);
  c.b.CreateCondBr(c.b.CreateICmpNE(ret, c.b.getInt64(0)), failed, done);
  c.b.SetInsertPoint(failed);
  llvm::Value *key = scratch_slot(c, 8);
  c.b.CreateAlignedStore(c.b.getInt64(0), key, llvm::Align(8));
  auto *words = call_helper(c, BPF_FUNC_map_lookup_elem, {map_ref(c, c.maps->globals), key},
                            c.b.getPtrTy());
  c.b.CreateCondBr(c.b.CreateIsNull(words), done, add);
  c.b.SetInsertPoint(add);
  c.b.CreateAtomicRMW(llvm::AtomicRMWInst::Add, byte_ptr(c, words, 8 * slot), c.b.getInt64(1),
                      llvm::Align(8), llvm::AtomicOrdering::Monotonic);
  c.b.CreateBr(done);
  c.b.SetInsertPoint(done);
}

} // namespace gpubt::codegen::bpf
