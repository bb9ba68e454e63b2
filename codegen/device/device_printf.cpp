// printf in gpu probes: the record (EventHeader + payload laid out as host printf events) is
// built in local memory, then copied into the device ring buffer (runtime/abi/device_abi.h).
// --timeline's launch records take the same path.
#include "codegen/device/device_context.h"
#include "codegen/layout/value_format.h"
#include "runtime/abi/device_abi.h"

namespace gpubt::codegen::device {

using namespace frontend;

namespace {

// Appends the FormatSpec of ARGS (8-aligned offsets, as host printf) and returns its index.
uint32_t add_format(DevCtx &c, std::string format, const std::vector<const Expr *> &args,
                    uint32_t *payload_size) {
  c.spec->formats.push_back(layout::value_format(std::move(format), args, payload_size));
  return c.spec->formats.size() - 1;
}

// Lockstep lanes (Vulkan) reserve with one atomic add each, no retry loop: lavapipe loses the
// values of lanes that leave a loop at different passes (README), so a compare-exchange loop gave
// lanes of one subgroup the same position. What passes the capacity stays reserved and is
// dropped; the reader stops there. Safe because the Vulkan layer reads the ring only at the end
// (its tail never moves): an abandoned reservation would stall a ring drained while it runs.
// Branches to WRITE (the position returned fits) or DROP.
llvm::Value *reserve_by_add(DevCtx &c, llvm::Value *head_p, llvm::Value *tail_p,
                            llvm::Value *cap, uint32_t size, llvm::BasicBlock *write,
                            llvm::BasicBlock *drop) {
  auto &b = c.b;
  auto *pos = atomic_rmw(c, llvm::AtomicRMWInst::Add, head_p, b.getInt64(size));
  auto *used = b.CreateSub(b.CreateAdd(pos, b.getInt64(size)), load_acquire(c, tail_p));
  b.CreateCondBr(b.CreateICmpULE(used, cap), write, drop);
  return pos;
}

// Reserves SIZE bytes of the ring and copies the record at BUF into them; drops when full.
void send_record(DevCtx &c, llvm::Value *buf, uint32_t size) {
  auto &b = c.b;
  c.spec->device.features |= abi::DeviceRecords;
  auto *ring_addr = ctx_field(c, offsetof(gpubt_device_ctx, ring), 8);
  auto *have = llvm::BasicBlock::Create(c.ctx, "ring", c.fn);
  auto *write = llvm::BasicBlock::Create(c.ctx, "ring.write", c.fn);
  auto *drop = llvm::BasicBlock::Create(c.ctx, "ring.drop", c.fn);
  auto *done = llvm::BasicBlock::Create(c.ctx, "ring.done", c.fn);
  b.CreateCondBr(b.CreateICmpEQ(ring_addr, b.getInt64(0)), done, have);

  b.SetInsertPoint(have);
  auto *ring = global_ptr(c, ring_addr);
  auto *head_p = byte_ptr(c, ring, offsetof(gpubt_device_ring, head));
  auto *tail_p = byte_ptr(c, ring, offsetof(gpubt_device_ring, tail));
  auto *cap = b.CreateZExt(
      b.CreateAlignedLoad(b.getInt32Ty(), byte_ptr(c, ring, offsetof(gpubt_device_ring, capacity)),
                          llvm::Align(4)),
      b.getInt64Ty());
  auto *data = byte_ptr(c, ring, sizeof(gpubt_device_ring));
  llvm::Value *head = nullptr;
  if (c.target.lockstep_lanes()) {
    head = reserve_by_add(c, head_p, tail_p, cap, size, write, drop);
  } else {
    auto *loop = llvm::BasicBlock::Create(c.ctx, "ring.reserve", c.fn, write);
    auto *take = llvm::BasicBlock::Create(c.ctx, "ring.take", c.fn, write);
    b.CreateBr(loop);

    b.SetInsertPoint(loop);
    head = load_acquire(c, head_p);
    auto *used = b.CreateSub(b.CreateAdd(head, b.getInt64(size)), load_acquire(c, tail_p));
    b.CreateCondBr(b.CreateICmpULE(used, cap), take, drop);

    b.SetInsertPoint(take);
    auto [old, ok] = compare_exchange(c, head_p, head, b.CreateAdd(head, b.getInt64(size)));
    (void)old;
    b.CreateCondBr(ok, write, loop);
  }

  b.SetInsertPoint(write);
  auto *wrap = b.CreateSub(cap, b.getInt64(1));
  auto at = [&](uint32_t off) {
    return b.CreateGEP(b.getInt8Ty(), data, b.CreateAnd(b.CreateAdd(head, b.getInt64(off)), wrap));
  };
  for (uint32_t off = 8; off < size; off += 8)
    store_u64(c, at(off), load_u64(c, byte_ptr(c, buf, off)));
  // {size, commit} last, in one release store: the agent reads a record once commit matches.
  auto *commit = b.CreateAdd(b.CreateLShr(head, 3), b.getInt64(1));
  store_release(c, at(0), b.CreateOr(b.getInt64(size), b.CreateShl(commit, 32)));
  b.CreateBr(done);

  b.SetInsertPoint(drop);
  atomic_rmw(c, llvm::AtomicRMWInst::Add, byte_ptr(c, ring, offsetof(gpubt_device_ring, drops)),
             b.getInt64(1));
  b.CreateBr(done);
  b.SetInsertPoint(done);
}

constexpr uint32_t kHead = sizeof(gpubt_ring_record) + sizeof(abi::EventHeader);

void store_header(DevCtx &c, llvm::Value *buf, abi::EventKind kind, uint32_t index) {
  uint64_t header = uint64_t(kind) | uint64_t(index) << 32;
  store_u64(c, byte_ptr(c, buf, sizeof(gpubt_ring_record)), c.b.getInt64(header));
}

// {pid, kernel_index}: two u32 fields of the ctx, side by side in a record.
void store_pid_kernel(DevCtx &c, llvm::Value *dst) {
  auto *pid = ctx_field(c, offsetof(gpubt_device_ctx, pid), 4);
  auto *kernel = ctx_field(c, offsetof(gpubt_device_ctx, kernel_index), 4);
  store_u64(c, dst, c.b.CreateOr(pid, c.b.CreateShl(kernel, 32)));
}

// --timeline: abi::EventStamp of a gpu probe's event at DST (its tid is the kernel's index).
void store_stamp(DevCtx &c, llvm::Value *dst) {
  store_u64(c, dst, device_nsecs(c));
  store_pid_kernel(c, byte_ptr(c, dst, offsetof(abi::EventStamp, pid)));
  store_u64(c, byte_ptr(c, dst, offsetof(abi::EventStamp, probe)),
            c.b.getInt64(c.probe_name_index | uint64_t(abi::kStampGpu) << 32));
}

} // namespace

void send_launch_record(DevCtx &c, llvm::Value *end_ns) {
  constexpr uint32_t size = kHead + sizeof(abi::GpuLaunchRecord);
  llvm::Value *buf = local_buffer(c, size);
  store_header(c, buf, abi::EventKind::GpuLaunch, 0);
  llvm::Value *rec = byte_ptr(c, buf, kHead);
  auto *start = load_relaxed(
      c, byte_ptr(c, c.userdata, offsetof(gpubt_device_ctx, launch_start)));
  store_u64(c, byte_ptr(c, rec, offsetof(abi::GpuLaunchRecord, start_ns)), start);
  store_u64(c, byte_ptr(c, rec, offsetof(abi::GpuLaunchRecord, end_ns)),
            end_ns ? end_ns : device_nsecs(c));
  store_pid_kernel(c, byte_ptr(c, rec, offsetof(abi::GpuLaunchRecord, pid)));
  static_assert(abi::kLaunchKernelNameSize == GPUBT_KERNEL_NAME_SIZE);
  for (uint32_t off = 0; off < abi::kLaunchKernelNameSize; off += 8)
    store_u64(c, byte_ptr(c, rec, offsetof(abi::GpuLaunchRecord, kernel) + off),
              ctx_field(c, offsetof(gpubt_device_ctx, kernel_name) + off, 8));
  send_record(c, buf, size);
}

void lower_printf(DevCtx &c, const CallExpr &call) {
  std::vector<const Expr *> args;
  for (size_t i = 1; i < call.args.size(); ++i)
    args.push_back(call.args[i].get());
  std::string fmt =
      call.args[0]->kind == ExprKind::String ? call.args[0]->as<StringExpr>().value : "";
  uint32_t payload = 0;
  uint32_t index = add_format(c, fmt, args, &payload);
  const auto &fs = c.spec->formats[index];
  std::vector<DVal> vals;
  for (const Expr *a : args)
    vals.push_back(lower_expr(c, *a));

  bool stamped = c.spec->timeline; // the stamp follows the args, as in host printf events
  uint32_t size = kHead + payload + (stamped ? sizeof(abi::EventStamp) : 0);
  llvm::Value *buf = local_buffer(c, size);
  store_header(c, buf, abi::EventKind::Printf, index);
  if (stamped)
    store_stamp(c, byte_ptr(c, buf, kHead + payload));
  for (size_t i = 0; i < args.size(); ++i) {
    Type t = args[i]->type;
    if (t.is_aggregate())
      t = Type::integer(8, t.is_signed);
    store_value(c, buf, t, vals[i], args[i]->type, kHead + fs.args[i].offset);
  }
  send_record(c, buf, size);
}

} // namespace gpubt::codegen::device
