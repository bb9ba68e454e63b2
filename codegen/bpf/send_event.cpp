// Ring-buffer events from BPF (see send_event.h).
#include "codegen/bpf/send_event.h"

#include <linux/bpf.h>

#include "codegen/bpf/global_counters.h"
#include "codegen/bpf/ir_helpers.h"

namespace gpubt::codegen::bpf {

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
  // A full ring buffer drops the event: counted, so gpubt reports lost events as bpftrace does.
  count_failure(c, ret, abi::GlobalLostEvents);
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
