// The device side of the lowering core's hooks (device_context.h) and gpu builtins -> device
// IR. Builtins are one table by stdlib::BuiltinId; expressions and statements are the core's.
#include <cstddef>
#include <functional>

#include "codegen/device/device_context.h"
#include "codegen/int_ops.h"
#include "runtime/abi/device_abi.h"
#include "stdlib/builtins.h"
#include "stdlib/functions.h"

namespace gpubt::codegen::device {

using namespace frontend;
using stdlib::BuiltinId;

namespace {

// A clock special (Clock, GlobalTimer); a target that has none makes the probe an error rather
// than let it read a silent 0.
llvm::Value *read_clock(DevCtx &c, Special s) {
  if (std::string why = c.target.unavailable(s); !why.empty())
    set_error(c, why);
  if (s == Special::Clock)
    c.spec->device.features |= abi::DeviceReadsCycles;
  return c.target.special(c.b, s);
}

using DimFn = llvm::Value *(DeviceTarget::*)(llvm::IRBuilder<> &, Dim) const;

// x + size_x * (y + size_y * z) of INDEX in a space of SIZE (x fastest).
llvm::Value *linear_index(DevCtx &c, DimFn index, DimFn size) {
  auto &t = c.target;
  auto *sx = (t.*size)(c.b, Dim::X), *sy = (t.*size)(c.b, Dim::Y);
  auto *yz = c.b.CreateAdd((t.*index)(c.b, Dim::Y), c.b.CreateMul((t.*index)(c.b, Dim::Z), sy));
  return c.b.CreateAdd((t.*index)(c.b, Dim::X), c.b.CreateMul(yz, sx));
}

// Linear thread index inside the block (x fastest).
llvm::Value *linear_thread_in_block(DevCtx &c) {
  return linear_index(c, &DeviceTarget::thread_index, &DeviceTarget::block_dim);
}

using BuiltinFn = std::function<DVal(DevCtx &)>;

BuiltinFn dim(DimFn f, Dim d) {
  return [f, d](DevCtx &c) -> DVal { return {(c.target.*f)(c.b, d)}; };
}

const std::map<BuiltinId, BuiltinFn> &builtin_table() {
  using T = DeviceTarget;
  static const std::map<BuiltinId, BuiltinFn> table = {
      {BuiltinId::Pid,
       [](DevCtx &c) -> DVal { return {ctx_field(c, offsetof(gpubt_device_ctx, pid), 4)}; }},
      // The global linear thread index: linear block * threads per block + linear thread.
      {BuiltinId::Tid,
       [](DevCtx &c) -> DVal {
         return {c.b.CreateAdd(c.b.CreateMul(linear_block(c), threads_per_block(c)),
                               linear_thread_in_block(c))};
       }},
      {BuiltinId::Nsecs, [](DevCtx &c) -> DVal { return {probe_nsecs(c)}; }},
      {BuiltinId::TidX, dim(&T::thread_index, Dim::X)},
      {BuiltinId::TidY, dim(&T::thread_index, Dim::Y)},
      {BuiltinId::TidZ, dim(&T::thread_index, Dim::Z)},
      {BuiltinId::BidX, dim(&T::block_index, Dim::X)},
      {BuiltinId::BidY, dim(&T::block_index, Dim::Y)},
      {BuiltinId::BidZ, dim(&T::block_index, Dim::Z)},
      {BuiltinId::BdimX, dim(&T::block_dim, Dim::X)},
      {BuiltinId::BdimY, dim(&T::block_dim, Dim::Y)},
      {BuiltinId::BdimZ, dim(&T::block_dim, Dim::Z)},
      {BuiltinId::GdimX, dim(&T::grid_dim, Dim::X)},
      {BuiltinId::GdimY, dim(&T::grid_dim, Dim::Y)},
      {BuiltinId::GdimZ, dim(&T::grid_dim, Dim::Z)},
      {BuiltinId::Lane, [](DevCtx &c) -> DVal { return {c.target.special(c.b, Special::LaneId)}; }},
      // The warp's index in its block (linear thread / warp size): %warpid is the hardware slot,
      // which can change during the thread's life (PTX ISA, "Special registers: %warpid").
      {BuiltinId::Warp,
       [](DevCtx &c) -> DVal {
         return {c.b.CreateUDiv(linear_thread_in_block(c), c.target.warp_size(c.b))};
       }},
      {BuiltinId::Sm, [](DevCtx &c) -> DVal { return {c.target.special(c.b, Special::SmId)}; }},
      // Read as the probe starts (DevCtx::request), for the lanes that came together.
      {BuiltinId::ActiveLanes,
       [](DevCtx &c) -> DVal {
         llvm::Value *lanes = c.request.lanes ? c.request.lanes : active_lanes(c);
         return {c.b.CreateZExt(lanes, c.b.getInt64Ty())};
       }},
      {BuiltinId::Clock, [](DevCtx &c) -> DVal { return {read_clock(c, Special::Clock)}; }},
      {BuiltinId::Kernel,
       [](DevCtx &c) -> DVal {
         return {byte_ptr(c, c.userdata, offsetof(gpubt_device_ctx, kernel_name))};
       }},
      {BuiltinId::Probe, [](DevCtx &c) -> DVal { return {c.b.getInt64(c.probe_name_index)}; }},
      // Written by other SMs' atomics: read at gpu scope, never from a stale L1 line.
      {BuiltinId::LaunchStart,
       [](DevCtx &c) -> DVal {
         return {load_relaxed(c, byte_ptr(c, c.userdata, offsetof(gpubt_device_ctx, launch_start)))};
       }},
      {BuiltinId::Addr, [](DevCtx &c) -> DVal { return {access_address(c)}; }},
      {BuiltinId::AccessSize, [](DevCtx &c) -> DVal { return {access_bytes(c)}; }},
      {BuiltinId::Access, [](DevCtx &c) -> DVal { return {access_word(c)}; }},
      {BuiltinId::Space, [](DevCtx &c) -> DVal { return {space_word(c)}; }},
      {BuiltinId::Sectors,
       [](DevCtx &c) -> DVal {
         return {c.request.sectors ? c.request.sectors : access_sectors(c)};
       }},
      {BuiltinId::BankConflicts,
       [](DevCtx &c) -> DVal {
         return {c.request.bank_conflicts ? c.request.bank_conflicts : access_bank_conflicts(c)};
       }},
      {BuiltinId::BarrierId, [](DevCtx &c) -> DVal { return {barrier_number(c)}; }},
      {BuiltinId::LastThread,
       [](DevCtx &c) -> DVal {
         if (!c.last_thread)
           set_error(c, "BUG: last_thread was not counted at the probe's start");
         return {c.last_thread ? c.last_thread : c.b.getInt64(0)};
       }},
  };
  return table;
}

DVal lower_builtin(DevCtx &c, const BuiltinExpr &e) {
  if (!e.id && !e.constant) {
    set_error(c, "BUG: identifier " + e.name + " was not resolved");
    return {c.b.getInt64(0)};
  }
  auto it = e.id ? builtin_table().find(*e.id) : builtin_table().end();
  if (it == builtin_table().end()) {
    set_error(c, "builtin " + e.name + " is not supported in gpu probes yet");
    return {c.b.getInt64(0)};
  }
  DVal v = it->second(c);
  if (e.id == BuiltinId::Kernel && e.type.kind == TypeKind::String &&
      e.type.size > GPUBT_KERNEL_NAME_SIZE)
    set_error(c, "BUG: kernel is wider than the context's name");
  if (v.v->getType()->isIntegerTy())
    v.v = normalize_int(c.b, v.v, e.type);
  return v;
}

DVal lower_call(DevCtx &c, const CallExpr &call) {
  if (call.id == stdlib::FunctionId::Printf) {
    lower_printf(c, call);
    return {c.b.getInt64(0)};
  }
  if (call.id == stdlib::FunctionId::Popcount)
    return {popcount_int(c.b, lower_expr(c, *call.args[0]).v, call.args[0]->type)};
  set_error(c, "BUG: function " + call.name + "() has no gpu lowering");
  return {c.b.getInt64(0)};
}

} // namespace

// Linear block index inside the grid (x fastest).
llvm::Value *linear_block(DevCtx &c) {
  return linear_index(c, &DeviceTarget::block_index, &DeviceTarget::grid_dim);
}

llvm::Value *threads_per_block(DevCtx &c) {
  auto &t = c.target;
  return c.b.CreateMul(c.b.CreateMul(t.block_dim(c.b, Dim::X), t.block_dim(c.b, Dim::Y)),
                       t.block_dim(c.b, Dim::Z));
}

bool DevCtx::holds_in_memory(const Type &t) const { return is_memory_type(t); }

llvm::Value *DevCtx::temp_buffer(uint32_t size, bool) { return local_buffer(*this, size); }

llvm::Value *DevCtx::variable_slot(const Type &t) {
  return local_buffer(*this, is_memory_type(t) ? t.size : 8);
}

DVal DevCtx::load(llvm::Value *ptr, uint32_t align, const Type &t) {
  DVal v = load_value(*this, ptr, t);
  v.align = align;
  return v;
}

void DevCtx::store(llvm::Value *dst, uint32_t align, const Type &dst_t, DVal src,
                   const Type &src_t) {
  store_value(*this, dst, dst_t, src, src_t, 0, align);
}

DVal DevCtx::string_value(const StringExpr &e) {
  uint32_t size = std::max<uint32_t>(e.type.size, e.value.size() + 1);
  llvm::Value *buf = local_buffer(*this, size);
  for (size_t i = 0; i < e.value.size(); ++i)
    b.CreateStore(b.getInt8(uint8_t(e.value[i])), byte_ptr(buf, i));
  return {buf};
}

DVal DevCtx::map_read(const MapExpr &m) { return read_map(*this, m); }

void DevCtx::map_write(const MapExpr &m, DVal v, const Type &v_type) {
  write_map(*this, m, v, v_type);
}

bool DevCtx::map_aggregate(const MapExpr &m, const CallExpr &call) {
  if (!call.id || stdlib::function_info(*call.id).kind != stdlib::FunctionKind::Aggregation)
    return false;
  update_aggregate(*this, m, call.args.empty() ? nullptr : lower_expr(*call.args[0]).v);
  return true;
}

DVal DevCtx::builtin_value(const BuiltinExpr &e) { return lower_builtin(*this, e); }

DVal DevCtx::call_value(const CallExpr &e) { return lower_call(*this, e); }

DVal DevCtx::deref_value(const UnaryExpr &) {
  set_error("codegen: the * operator is not supported in gpu probes");
  return {b.getInt64(0)};
}

DVal DevCtx::address_of(const UnaryExpr &) {
  set_error("codegen: the & operator is not supported in gpu probes");
  return {b.getInt64(0)};
}

DVal DevCtx::index_value(const IndexExpr &) {
  set_error("codegen: the [] operator is not supported in gpu probes");
  return {b.getInt64(0)};
}

DVal DevCtx::field_value(const FieldExpr &e) {
  set_error("field ." + e.field + " is not supported in gpu probes yet");
  return {b.getInt64(0)};
}

std::optional<DVal> DevCtx::memory_compare(const BinaryExpr &, DVal, DVal) { return std::nullopt; }

std::string DevCtx::operator_error(const BinaryExpr &e) {
  return "operator on " + to_string(e.lhs->type) + " is not supported in gpu probes yet";
}

// Range for and while loops are plain loops in device code (no verifier to satisfy); a range
// loop's end was evaluated once into its own variable. check_types refuses for over a map.
void DevCtx::lower_while(const WhileStmt &s) {
  if (s.each_map)
    return set_error("for loops over maps are not available in gpu probes");
  Lowering::lower_while(s);
}

// `nsecs` in a probe: in the launch's last thread under --timeline, the reading its launch record
// took (two reads could straddle a %globaltimer tick and put the span a log2 bucket away from
// the script's own `nsecs - launch_start`).
llvm::Value *probe_nsecs(DevCtx &c) {
  llvm::Value *now = device_nsecs(c);
  if (!c.launch_end_ns)
    return now;
  auto &b = c.b;
  return b.CreateSelect(b.CreateICmpNE(c.last_thread, b.getInt64(0)), c.launch_end_ns, now);
}

// (X * R) >> 32 for signed X and Q32 R without the 64-bit product overflowing: a Vulkan clock
// ticking every 10 to 80 ns has R of that many times 2^32 (the CUDA agent's drift is a few
// ppm). With X = xh * 2^32 + xl and R = rh * 2^32 + rl: xh * R + xl * rh + (xl * rl >> 32).
static llvm::Value *mul_q32(llvm::IRBuilder<> &b, llvm::Value *x, llvm::Value *r) {
  auto *low = b.getInt64(0xffffffffull);
  auto *xh = b.CreateAShr(x, 32), *xl = b.CreateAnd(x, low);
  auto *rh = b.CreateAShr(r, 32), *rl = b.CreateAnd(r, low);
  return b.CreateAdd(b.CreateAdd(b.CreateMul(xh, r), b.CreateMul(xl, rh)),
                     b.CreateLShr(b.CreateMul(xl, rl), 32));
}

// The agent's model of the GPU clock against CLOCK_MONOTONIC: offset plus drift.
llvm::Value *device_nsecs(DevCtx &c) {
  c.spec->device.features |= abi::DeviceReadsClock; // the agent then measures the GPU clock
  auto &b = c.b;
  llvm::Value *t = read_clock(c, Special::GlobalTimer);
  auto *base = ctx_field(c, offsetof(gpubt_device_ctx, clock_base), 8);
  auto *mask = ctx_field(c, offsetof(gpubt_device_ctx, clock_mask), 8);
  auto *since = b.CreateSub(t, base);
  // A clock narrower than 64 bits (clock_mask) is unwrapped from clock_base.
  since = b.CreateSelect(b.CreateICmpEQ(mask, b.getInt64(0)), since, b.CreateAnd(since, mask));
  t = b.CreateAdd(base, since);
  auto *drift = mul_q32(b, since, ctx_field(c, offsetof(gpubt_device_ctx, clock_rate), 8));
  return b.CreateAdd(b.CreateAdd(t, ctx_field(c, offsetof(gpubt_device_ctx, clock_offset_ns), 8)),
                     drift);
}

} // namespace gpubt::codegen::device
