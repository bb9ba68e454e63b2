// gpu:block_begin / gpu:block_end: each running block's word in block_slots (device_abi.h),
// claimed by the block's first warp in and freed by its last thread out. One atomic per warp,
// by its lowest active lane (elect_lowest_lane), as last_thread counts a launch's threads.
#include <llvm/IR/Intrinsics.h>

#include "codegen/device/device_context.h"
#include "runtime/abi/device_abi.h"

namespace gpubt::codegen::device {

namespace {

static_assert((GPUBT_BLOCK_SLOTS & (GPUBT_BLOCK_SLOTS - 1)) == 0);
constexpr unsigned kSlotShift = __builtin_ctz(GPUBT_BLOCK_SLOTS);

struct BlockWord {
  llvm::Value *ptr; // the block's word, a global pointer
  llvm::Value *tag; // its claimed value with no thread out: (B / SLOTS + 1) << 32, never 0
};

BlockWord block_word(DevCtx &c) {
  auto &b = c.b;
  c.spec->device.features |= abi::DeviceBlockState;
  llvm::Value *block = linear_block(c);
  auto *base = global_ptr(c, ctx_field(c, offsetof(gpubt_device_ctx, block_slots), 8));
  auto *index = b.CreateAnd(block, b.getInt64(GPUBT_BLOCK_SLOTS - 1));
  auto *ptr = b.CreateGEP(b.getInt8Ty(), base, b.CreateMul(index, b.getInt64(8)));
  // Blocks 2^45 apart share a tag; no GPU runs two such blocks at once.
  auto *high = b.CreateURem(b.CreateLShr(block, kSlotShift), b.getInt64(0xffffffffull));
  return {ptr, b.CreateShl(b.CreateAdd(high, b.getInt64(1)), 32)};
}

// Whether the word SEEN holds W's block (whatever its count of threads that left).
llvm::Value *held_by(DevCtx &c, const BlockWord &w, llvm::Value *seen) {
  return c.b.CreateICmpEQ(c.b.CreateAnd(seen, c.b.getInt64(0xffffffff00000000ull)), w.tag);
}

llvm::BasicBlock *block(DevCtx &c, const char *name) {
  return llvm::BasicBlock::Create(c.ctx, name, c.fn);
}

} // namespace

// The warp's leader claims the word unless its block holds it already. A word another block
// holds (one GPUBT_BLOCK_SLOTS away, still running) is not waited for: a probe must never make
// one block wait on another (the other may be waiting on it), so this block's edges are lost
// unless a later warp of it finds the word free.
llvm::Value *enter_block(DevCtx &c) {
  auto &b = c.b;
  auto warp = elect_lowest_lane(c, active_lanes(c));
  auto *pre = b.GetInsertBlock();
  auto *loop = block(c, "block.look"), *other = block(c, "block.other"),
       *claim = block(c, "block.claim"), *done = block(c, "block.entered");
  auto *lead = block(c, "block.lead");
  b.CreateCondBr(warp.elected(b), lead, done);
  b.SetInsertPoint(lead);
  BlockWord w = block_word(c);
  b.CreateBr(loop);

  b.SetInsertPoint(loop);
  auto *seen = load_relaxed(c, w.ptr);
  b.CreateCondBr(held_by(c, w, seen), done, other);

  b.SetInsertPoint(other);
  b.CreateCondBr(b.CreateICmpEQ(seen, b.getInt64(0)), claim, done);

  // A failed claim saw the word change: the next look finds it ours or another's.
  b.SetInsertPoint(claim);
  auto [old, ok] = compare_exchange(c, w.ptr, b.getInt64(0), w.tag);
  (void)old;
  b.CreateCondBr(ok, done, loop);

  b.SetInsertPoint(done);
  auto *first = b.CreatePHI(b.getInt1Ty(), 4, "block.first");
  first->addIncoming(b.getFalse(), pre);
  first->addIncoming(b.getFalse(), loop);
  first->addIncoming(b.getFalse(), other);
  first->addIncoming(b.getTrue(), claim);
  return first;
}

// The warp's leader adds its active lanes to the word's count while the word is its block's
// (compare-exchange, acquire-release, so the last thread out sees what every thread of the block
// wrote before it left); the one whose add brings it to the block's threads frees the word for
// the next block there. A block that never held its word (enter_block) counts nothing.
llvm::Value *leave_block(DevCtx &c) {
  auto &b = c.b;
  llvm::Value *mask = active_lanes(c);
  auto warp = elect_lowest_lane(c, mask);
  auto *n = b.CreateZExt(b.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, mask), b.getInt64Ty());
  auto *pre = b.GetInsertBlock();
  auto *lead = block(c, "block.leave"), *loop = block(c, "block.count"),
       *add = block(c, "block.add"), *counted = block(c, "block.counted"),
       *free = block(c, "block.free"), *done = block(c, "block.left");
  b.CreateCondBr(warp.elected(b), lead, done);

  b.SetInsertPoint(lead);
  BlockWord w = block_word(c);
  b.CreateBr(loop);

  b.SetInsertPoint(loop);
  auto *seen = load_relaxed(c, w.ptr);
  b.CreateCondBr(held_by(c, w, seen), add, done);

  b.SetInsertPoint(add);
  auto *now = b.CreateAdd(seen, n);
  auto [old, ok] = compare_exchange(c, w.ptr, seen, now);
  (void)old;
  b.CreateCondBr(ok, counted, loop);

  b.SetInsertPoint(counted);
  auto *last = b.CreateICmpEQ(b.CreateAnd(now, b.getInt64(0xffffffffull)), threads_per_block(c));
  b.CreateCondBr(last, free, done);

  b.SetInsertPoint(free);
  store_release(c, w.ptr, b.getInt64(0));
  b.CreateBr(done);

  b.SetInsertPoint(done);
  auto *out = b.CreatePHI(b.getInt1Ty(), 4, "block.last");
  out->addIncoming(b.getFalse(), pre);
  out->addIncoming(b.getFalse(), loop);
  out->addIncoming(b.getFalse(), counted);
  out->addIncoming(b.getTrue(), free);
  return out;
}

} // namespace gpubt::codegen::device
