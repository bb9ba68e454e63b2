// gpu:hang's builtins and args: loads from abi::HangCtx, the program's context; a launch-level
// gpu:kretprobe's from abi::LaunchCtx, which shares HangCtx's offsets.
#include "codegen/bpf/lower_hang.h"

#include <linux/bpf.h>

#include "codegen/bpf/ir_helpers.h"
#include "frontend/nearest_name.h"
#include "runtime/abi/hang_ctx.h"
#include "runtime/abi/launch_ctx.h"
#include "stdlib/builtins.h"

namespace gpubt::codegen::bpf {

using frontend::Provider;
using stdlib::BuiltinId;

namespace {

const abi::HangArg *find_arg(std::string_view field) {
  for (const auto &a : abi::kHangArgs)
    if (a.name == field)
      return &a;
  return nullptr;
}

// A raw tracepoint's context is read in loads of its fields' own size and alignment.
llvm::Value *ctx_field(LowerCtx &c, uint32_t offset, uint32_t size) {
  auto *ty = llvm::IntegerType::get(c.ctx, size * 8);
  auto *v = c.b.CreateAlignedLoad(ty, byte_ptr(c, c.regs, offset), llvm::Align(size));
  return c.b.CreateZExt(v, c.b.getInt64Ty());
}

llvm::Value *dim(LowerCtx &c, size_t base, int axis) {
  return ctx_field(c, uint32_t(base + 4 * axis), 4);
}

// The kernel's device name, from gpubt's memory (the test run is in gpubt's context).
Val kernel_name(LowerCtx &c, uint32_t size) {
  llvm::Value *buf = scratch_slot(c, size);
  zero_bytes(c, buf, 8, size);
  llvm::Value *src = c.b.CreateIntToPtr(ctx_field(c, offsetof(abi::HangCtx, kernel), 8),
                                        c.b.getPtrTy());
  call_helper(c, BPF_FUNC_probe_read_user_str, {buf, c.b.getInt32(size), src});
  return {buf, 8};
}

} // namespace

std::optional<frontend::Type> hang_arg_type(const frontend::AttachPoint &ap,
                                            std::string_view field) {
  if (ap.provider != Provider::GpuHang || !find_arg(field))
    return std::nullopt;
  return frontend::Type::integer(8, false);
}

std::string hang_arg_error(const frontend::AttachPoint &ap, std::string_view field) {
  if (ap.provider != Provider::GpuHang || find_arg(field))
    return "";
  std::vector<std::string> names;
  std::string list;
  for (const auto &a : abi::kHangArgs) {
    names.emplace_back(a.name);
    list += (list.empty() ? "" : ", ") + std::string(a.name);
  }
  std::string near = frontend::did_you_mean(std::string(field), names);
  return "gpu:hang probes have no args." + std::string(field) +
         (near.empty() ? " (their args are " + list + ")" : near);
}

std::optional<Val> lower_hang_builtin(LowerCtx &c, const frontend::BuiltinExpr &e) {
  constexpr size_t grid = offsetof(abi::HangCtx, grid), block = offsetof(abi::HangCtx, block);
  if (c.ap->provider == Provider::GpuLaunch) { // a finished launch: its end, its last thread
    if (*e.id == BuiltinId::Nsecs)
      return Val{ctx_field(c, offsetof(abi::LaunchCtx, end_ns), 8)};
    if (*e.id == BuiltinId::LastThread)
      return Val{c.b.getInt64(1)};
    if (*e.id == BuiltinId::LaunchCall)
      return Val{ctx_field(c, offsetof(abi::LaunchCtx, call_ns), 8)};
  }
  switch (*e.id) {
  case BuiltinId::Pid: return Val{ctx_field(c, offsetof(abi::HangCtx, pid), 4)};
  case BuiltinId::LaunchStart: return Val{ctx_field(c, offsetof(abi::HangCtx, since_ns), 8)};
  case BuiltinId::Kernel: return kernel_name(c, e.type.size ? e.type.size : 64);
  case BuiltinId::GdimX: return Val{dim(c, grid, 0)};
  case BuiltinId::GdimY: return Val{dim(c, grid, 1)};
  case BuiltinId::GdimZ: return Val{dim(c, grid, 2)};
  case BuiltinId::BdimX: return Val{dim(c, block, 0)};
  case BuiltinId::BdimY: return Val{dim(c, block, 1)};
  case BuiltinId::BdimZ: return Val{dim(c, block, 2)};
  default: return std::nullopt;
  }
}

Val lower_hang_arg(LowerCtx &c, const frontend::FieldExpr &e) {
  const abi::HangArg *a = find_arg(e.field);
  if (!a) {
    set_error(c, "codegen: no field " + e.field + " in " + c.ap->name());
    return {c.b.getInt64(0)};
  }
  return {ctx_field(c, a->offset, a->size)};
}

} // namespace gpubt::codegen::bpf
