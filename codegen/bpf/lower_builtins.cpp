// Builtins (pid, comm, arg0, retval, func, elapsed, ...) -> IR, one row per stdlib::BuiltinId;
// tracepoint args.NAME reads.
#include <linux/bpf.h>

#include <unistd.h>

#include <algorithm>
#include <map>

#include "codegen/bpf/ir_helpers.h"
#include "codegen/bpf/lower_expr.h"
#include "codegen/bpf/lower_hang.h"
#include "codegen/bpf/lower_pystack.h"
#include "codegen/bpf/lower_usdt.h"
#include "codegen/bpf/tracepoint_format.h"
#include "stdlib/builtins.h"
#include "stdlib/registers.h"

namespace gpubt::codegen::bpf {

using namespace frontend;
using stdlib::BuiltinId;

namespace {

// Offsets in the x86-64 kernel's struct pt_regs, the context of uprobe programs.
constexpr uint32_t kRegAx = 80, kRegIp = 128, kRegSp = 152;
constexpr uint32_t kArgRegs[] = {112 /*di*/, 104 /*si*/, 96 /*dx*/, 88 /*cx*/, 72 /*r8*/,
                                 64 /*r9*/};

llvm::Value *ctx_load(LowerCtx &c, uint32_t off, uint32_t size = 8) {
  auto *ty = llvm::IntegerType::get(c.ctx, size * 8);
  auto *v = c.b.CreateAlignedLoad(ty, byte_ptr(c, c.regs, off), llvm::Align(size));
  return c.b.CreateZExt(v, c.b.getInt64Ty());
}

llvm::Value *helper0(LowerCtx &c, int id) { return call_helper(c, id, {}); }

// globals[slot], written by the runtime before attaching (start time, child pid).
llvm::Value *global_word(LowerCtx &c, uint32_t slot) {
  llvm::Value *key = scratch_slot(c, 8);
  c.b.CreateAlignedStore(c.b.getInt64(0), key, llvm::Align(8));
  auto *p = call_helper(c, BPF_FUNC_map_lookup_elem, {map_ref(c, c.maps->globals), key},
                        c.b.getPtrTy());
  auto *hit = llvm::BasicBlock::Create(c.ctx, "glob.hit", c.fn);
  auto *done = llvm::BasicBlock::Create(c.ctx, "glob.done", c.fn);
  auto *from = c.b.GetInsertBlock();
  c.b.CreateCondBr(c.b.CreateIsNull(p), done, hit);
  c.b.SetInsertPoint(hit);
  auto *v = c.b.CreateAlignedLoad(c.b.getInt64Ty(), byte_ptr(c, p, 8 * slot), llvm::Align(8));
  c.b.CreateBr(done);
  c.b.SetInsertPoint(done);
  auto *phi = c.b.CreatePHI(c.b.getInt64Ty(), 2);
  phi->addIncoming(c.b.getInt64(0), from);
  phi->addIncoming(v, hit);
  return phi;
}

// The n-th 8-byte word on the user stack above the return address (sarg0 is the first).
llvm::Value *stack_arg(LowerCtx &c, int n) {
  llvm::Value *slot = stack_i64(c);
  auto *addr = c.b.CreateAdd(ctx_load(c, kRegSp), c.b.getInt64(8 * (n + 1)));
  call_helper(c, BPF_FUNC_probe_read_user,
              {slot, c.b.getInt32(8), c.b.CreateIntToPtr(addr, c.b.getPtrTy())});
  return c.b.CreateAlignedLoad(c.b.getInt64Ty(), slot, llvm::Align(8));
}

} // namespace

llvm::Value *lower_arg(LowerCtx &c, int n) {
  if (c.usdt)
    return usdt_arg(c, n);
  if (n < 6)
    return ctx_load(c, kArgRegs[n]);
  return stack_arg(c, n - 6); // arg6+ are on the user stack above the return address
}

namespace {

Val comm(LowerCtx &c, uint32_t size) {
  llvm::Value *buf = scratch_slot(c, size);
  zero_bytes(c, buf, 8, size);
  call_helper(c, BPF_FUNC_get_current_comm, {buf, c.b.getInt32(std::min<uint32_t>(size, 16))});
  return {buf, 8};
}

// kstack or ustack (FLAGS): SIZE bytes of return addresses by frame-pointer unwinding in the
// kernel (>= 6.13 includes the caller at a function's entry too). begin and end, run from gpubt
// itself, have no stack to take: an empty one, as bpftrace head prints.
Val stack(LowerCtx &c, uint32_t size, uint64_t flags) {
  llvm::Value *buf = scratch_slot(c, size);
  zero_bytes(c, buf, 8, size);
  if (c.ap && c.ap->provider != frontend::Provider::Begin &&
      c.ap->provider != frontend::Provider::End)
    call_helper(c, BPF_FUNC_get_stack, {c.regs, buf, c.b.getInt32(size), c.b.getInt64(flags)});
  return {buf, 8};
}

using BuiltinFn = Val (*)(LowerCtx &, const BuiltinExpr &, int arg_index);

const std::map<BuiltinId, BuiltinFn> &builtin_table() {
  static const std::map<BuiltinId, BuiltinFn> table = {
      {BuiltinId::Pid,
       [](LowerCtx &c, const BuiltinExpr &, int) -> Val {
         return {c.b.CreateLShr(helper0(c, BPF_FUNC_get_current_pid_tgid), 32)};
       }},
      {BuiltinId::Tid,
       [](LowerCtx &c, const BuiltinExpr &, int) -> Val {
         return {c.b.CreateAnd(helper0(c, BPF_FUNC_get_current_pid_tgid), 0xffffffffu)};
       }},
      {BuiltinId::Uid,
       [](LowerCtx &c, const BuiltinExpr &, int) -> Val {
         return {c.b.CreateAnd(helper0(c, BPF_FUNC_get_current_uid_gid), 0xffffffffu)};
       }},
      {BuiltinId::Gid,
       [](LowerCtx &c, const BuiltinExpr &, int) -> Val {
         return {c.b.CreateLShr(helper0(c, BPF_FUNC_get_current_uid_gid), 32)};
       }},
      {BuiltinId::Cpu,
       [](LowerCtx &c, const BuiltinExpr &, int) -> Val {
         return {helper0(c, BPF_FUNC_get_smp_processor_id)};
       }},
      {BuiltinId::Comm,
       [](LowerCtx &c, const BuiltinExpr &e, int) -> Val {
         return comm(c, e.type.size ? e.type.size : 16);
       }},
      {BuiltinId::Nsecs,
       [](LowerCtx &c, const BuiltinExpr &, int) -> Val {
         return {helper0(c, BPF_FUNC_ktime_get_ns)};
       }},
      {BuiltinId::Elapsed,
       [](LowerCtx &c, const BuiltinExpr &, int) -> Val {
         auto *now = helper0(c, BPF_FUNC_ktime_get_ns);
         return {c.b.CreateSub(now, global_word(c, abi::GlobalStartNs))};
       }},
      {BuiltinId::Cgroup,
       [](LowerCtx &c, const BuiltinExpr &, int) -> Val {
         return {helper0(c, BPF_FUNC_get_current_cgroup_id)};
       }},
      {BuiltinId::Cpid,
       [](LowerCtx &c, const BuiltinExpr &, int) -> Val {
         if (!c.opts->has_child)
           set_error(c, "cpid cannot be used without child command");
         return {global_word(c, abi::GlobalChildPid)};
       }},
      {BuiltinId::Rand,
       [](LowerCtx &c, const BuiltinExpr &, int) -> Val {
         return {helper0(c, BPF_FUNC_get_prandom_u32)};
       }},
      {BuiltinId::Curtask,
       [](LowerCtx &c, const BuiltinExpr &, int) -> Val {
         return {helper0(c, BPF_FUNC_get_current_task)};
       }},
      {BuiltinId::Arg,
       [](LowerCtx &c, const BuiltinExpr &, int n) -> Val { return {lower_arg(c, n)}; }},
      {BuiltinId::Sarg,
       [](LowerCtx &c, const BuiltinExpr &, int n) -> Val { return {stack_arg(c, n)}; }},
      {BuiltinId::Numaid,
       [](LowerCtx &c, const BuiltinExpr &, int) -> Val {
         return {helper0(c, BPF_FUNC_get_numa_node_id)};
       }},
      {BuiltinId::Ncpus,
       [](LowerCtx &c, const BuiltinExpr &, int) -> Val {
         return {c.b.getInt64(std::max<long>(1, sysconf(_SC_NPROCESSORS_CONF)))};
       }},
      {BuiltinId::Jiffies,
       [](LowerCtx &c, const BuiltinExpr &, int) -> Val {
         return {helper0(c, BPF_FUNC_jiffies64)};
       }},
      {BuiltinId::NsecsBoot,
       [](LowerCtx &c, const BuiltinExpr &, int) -> Val {
         return {helper0(c, BPF_FUNC_ktime_get_boot_ns)};
       }},
      {BuiltinId::NsecsTai,
       [](LowerCtx &c, const BuiltinExpr &, int) -> Val {
         return {helper0(c, BPF_FUNC_ktime_get_tai_ns)};
       }},
      {BuiltinId::Usermode,
       [](LowerCtx &c, const BuiltinExpr &, int) -> Val {
         // begin/end run from gpubt (BPF_PROG_TEST_RUN): user mode. Else the saved cs's
         // privilege level (x86_64).
         if (!c.ap || c.ap->provider == frontend::Provider::Begin ||
             c.ap->provider == frontend::Provider::End)
           return {c.b.getInt64(1)};
         llvm::Value *cs = ctx_load(c, *stdlib::pt_regs_offset("cs"));
         return {c.b.CreateZExt(c.b.CreateICmpEQ(c.b.CreateAnd(cs, 3), c.b.getInt64(3)),
                                c.b.getInt64Ty())};
       }},
      {BuiltinId::Probetype,
       [](LowerCtx &c, const BuiltinExpr &e, int) -> Val {
         frontend::StringExpr name;
         name.value = c.ap ? std::string(stdlib::probe_type_name(c.ap->provider)) : "";
         name.type = e.type;
         return lower_expr(c, name);
       }},
      {BuiltinId::Username, // the uid: user space prints its name
       [](LowerCtx &c, const BuiltinExpr &, int) -> Val {
         return {c.b.CreateAnd(helper0(c, BPF_FUNC_get_current_uid_gid), 0xffffffffu)};
       }},
      {BuiltinId::Ctx,
       [](LowerCtx &c, const BuiltinExpr &, int) -> Val {
         return {c.b.CreatePtrToInt(c.regs, c.b.getInt64Ty())};
       }},
      {BuiltinId::Retval,
       [](LowerCtx &c, const BuiltinExpr &, int) -> Val { return {ctx_load(c, kRegAx)}; }},
      {BuiltinId::Func,
       [](LowerCtx &c, const BuiltinExpr &, int) -> Val {
         // The attach cookie naming the function (abi::kFuncCookieTag); where the runtime set
         // none, the probed function's address (uprobes and uretprobes, kernel >= 6.3).
         llvm::Value *cookie = call_helper(c, BPF_FUNC_get_attach_cookie, {c.regs});
         llvm::Value *ip = call_helper(c, BPF_FUNC_get_func_ip, {c.regs});
         llvm::Value *has = c.b.CreateICmpNE(cookie, c.b.getInt64(0));
         return {c.b.CreateSelect(has, cookie, ip)};
       }},
      {BuiltinId::Ustack,
       [](LowerCtx &c, const BuiltinExpr &e, int) -> Val {
         if (e.type.kind == frontend::TypeKind::UstackPy)
           return lower_ustack_py(c, e.type);
         return stack(c, e.type.size, BPF_F_USER_STACK);
       }},
      {BuiltinId::Pystack,
       [](LowerCtx &c, const BuiltinExpr &e, int) -> Val {
         return lower_pystack(c, (e.type.size - 8) / 16);
       }},
      {BuiltinId::Kstack,
       [](LowerCtx &c, const BuiltinExpr &e, int) -> Val {
         return stack(c, e.type.size, 0);
       }},
      {BuiltinId::Probe,
       [](LowerCtx &c, const BuiltinExpr &, int) -> Val {
         // Probes of one name share its first index: a usdt probe inlined at two sites is one
         // map key, as in bpftrace.
         const auto &names = c.spec->probe_names;
         auto first = std::find(names.begin(), names.end(), names[c.probe_index]);
         llvm::Value *fixed = c.b.getInt64(first - names.begin());
         bool expands = c.ap && (c.ap->provider == frontend::Provider::Uprobe ||
                                 c.ap->provider == frontend::Provider::Uretprobe ||
                                 c.ap->provider == frontend::Provider::Tracepoint);
         bool tracepoint = expands && c.ap->provider == frontend::Provider::Tracepoint;
         auto wild = [](const std::string &s) { return s.find_first_of("*?[") != s.npos; };
         if (!expands || !(wild(c.ap->func) || (tracepoint && wild(c.ap->target))))
           return {fixed};
         // A wildcard: the matched function's or tracepoint's expanded name, from its attach
         // cookie (runtime/bpf/attach.cpp).
         llvm::Value *cookie = call_helper(c, BPF_FUNC_get_attach_cookie, {c.regs});
         llvm::Value *index = c.b.CreateAnd(c.b.CreateLShr(cookie, 32), 0x7fffffff);
         return {c.b.CreateSelect(c.b.CreateICmpNE(cookie, c.b.getInt64(0)), index, fixed)};
       }},
  };
  return table;
}

} // namespace

Val lower_builtin(LowerCtx &c, const BuiltinExpr &e) {
  if (!e.id && e.constant)
    return {c.b.getInt64(*e.constant)};
  if (!e.id) {
    set_error(c, "BUG: identifier " + e.name + " was not resolved");
    return {c.b.getInt64(0)};
  }
  std::optional<Val> hang;
  if (c.ap && (c.ap->provider == Provider::GpuHang || c.ap->provider == Provider::GpuLaunch))
    hang = lower_hang_builtin(c, e);
  auto it = builtin_table().find(*e.id);
  if (hang) {
    Val v = *hang;
    if (!is_memory_type(e.type) && v.v->getType()->isIntegerTy())
      v.v = normalize(c, v.v, e.type);
    return v;
  }
  if (it == builtin_table().end()) {
    set_error(c, "codegen: builtin " + e.name + " is not supported in host probes");
    return {c.b.getInt64(0)};
  }
  Val v = it->second(c, e, e.arg_index);
  if (!is_memory_type(e.type) && v.v->getType()->isIntegerTy())
    v.v = normalize(c, v.v, e.type);
  return v;
}

Val lower_tracepoint_arg(LowerCtx &c, const FieldExpr &e) {
  std::optional<TracepointField> f;
  if (c.ap->provider == Provider::Tracepoint) {
    f = c.opts->tracepoint_field ? c.opts->tracepoint_field(*c.ap, e.field)
                                 : read_tracepoint_field(c.ap->target, c.ap->func, e.field);
  }
  if (!f) {
    set_error(c, "codegen: no field " + e.field + " in " + c.ap->name());
    return {c.b.getInt64(0)};
  }
  if (e.type.kind == TypeKind::String) {
    uint32_t size = e.type.size ? e.type.size : 64;
    llvm::Value *buf = scratch_slot(c, size);
    zero_bytes(c, buf, 8, size);
    if (f->data_loc) {
      // The record holds (length << 16 | offset-in-record).
      auto *loc = c.b.CreateAnd(ctx_load(c, f->offset, 4), 0xffff);
      auto *src = c.b.CreateInBoundsGEP(c.b.getInt8Ty(), c.regs, loc);
      call_helper(c, BPF_FUNC_probe_read_kernel_str, {buf, c.b.getInt32(size), src});
    } else {
      uint32_t n = std::min(size - 1, f->size);
      for (uint32_t i = 0; i < n; ++i)
        c.b.CreateStore(c.b.CreateTrunc(ctx_load(c, f->offset + i, 1), c.b.getInt8Ty()),
                        byte_ptr(c, buf, i));
    }
    return {buf, 8};
  }
  uint32_t size = f->size == 1 || f->size == 2 || f->size == 4 ? f->size : 8;
  auto *ty = llvm::IntegerType::get(c.ctx, size * 8);
  llvm::Value *v = c.b.CreateAlignedLoad(ty, byte_ptr(c, c.regs, f->offset), llvm::Align(size));
  v = f->is_signed ? c.b.CreateSExt(v, c.b.getInt64Ty()) : c.b.CreateZExt(v, c.b.getInt64Ty());
  return {normalize(c, v, e.type)};
}

} // namespace gpubt::codegen::bpf
