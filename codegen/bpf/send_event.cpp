// Ring-buffer events from BPF (see send_event.h).
#include "codegen/bpf/send_event.h"

#include <linux/bpf.h>

#include "codegen/bpf/ir_helpers.h"

namespace gpubt::codegen::bpf {

namespace {

// A full ring buffer drops the event: count it in the globals map, so gpubt can report lost
// events as bpftrace does instead of losing them silently.
void count_lost_event(LowerCtx &c, llvm::Value *ret) {
  auto *lost = llvm::BasicBlock::Create(c.ctx, "event.lost", c.fn);
  auto *add = llvm::BasicBlock::Create(c.ctx, "event.lost.add", c.fn);
  auto *done = llvm::BasicBlock::Create(c.ctx, "event.done", c.fn);
  c.b.CreateCondBr(c.b.CreateICmpNE(ret, c.b.getInt64(0)), lost, done);
  c.b.SetInsertPoint(lost);
  llvm::Value *key = scratch_slot(c, 8);
  c.b.CreateAlignedStore(c.b.getInt64(0), key, llvm::Align(8));
  auto *words = call_helper(c, BPF_FUNC_map_lookup_elem, {map_ref(c, c.maps->globals), key},
                            c.b.getPtrTy());
  c.b.CreateCondBr(c.b.CreateIsNull(words), done, add);
  c.b.SetInsertPoint(add);
  c.b.CreateAtomicRMW(llvm::AtomicRMWInst::Add, byte_ptr(c, words, 8 * abi::GlobalLostEvents),
                      c.b.getInt64(1), llvm::Align(8), llvm::AtomicOrdering::Monotonic);
  c.b.CreateBr(done);
  c.b.SetInsertPoint(done);
}

} // namespace

void send_event(LowerCtx &c, abi::EventKind kind, uint32_t index, uint32_t payload,
                const std::function<void(llvm::Value *payload)> &fill) {
  uint32_t size = sizeof(abi::EventHeader) + payload;
  llvm::Value *buf = scratch_slot(c, size);
  c.b.CreateAlignedStore(c.b.getInt32(static_cast<uint32_t>(kind)), buf, llvm::Align(8));
  c.b.CreateAlignedStore(c.b.getInt32(index), byte_ptr(c, buf, 4), llvm::Align(4));
  if (fill)
    fill(byte_ptr(c, buf, sizeof(abi::EventHeader)));
  llvm::Value *ret = call_helper(c, BPF_FUNC_ringbuf_output, {map_ref(c, c.maps->ringbuf), buf,
                                                              c.b.getInt64(size), c.b.getInt64(0)});
  count_lost_event(c, ret);
}

void store_stamp(LowerCtx &c, llvm::Value *dst) {
  auto *now = call_helper(c, BPF_FUNC_ktime_get_ns, {});
  auto *pid_tgid = call_helper(c, BPF_FUNC_get_current_pid_tgid, {});
  c.b.CreateAlignedStore(now, dst, llvm::Align(8));
  // {pid, tid} as two u32s is pid_tgid with its halves swapped.
  auto *swapped = c.b.CreateOr(c.b.CreateLShr(pid_tgid, 32), c.b.CreateShl(pid_tgid, 32));
  c.b.CreateAlignedStore(swapped, byte_ptr(c, dst, offsetof(abi::EventStamp, pid)),
                         llvm::Align(8));
  c.b.CreateAlignedStore(c.b.getInt64(c.probe_index),
                         byte_ptr(c, dst, offsetof(abi::EventStamp, probe)), llvm::Align(8));
}

} // namespace gpubt::codegen::bpf
