// Script functions -> IR, one row per stdlib::FunctionId: aggregations update their map in
// place; printf/print/clear/zero/exit/time send ring buffer events; str reads user memory.
#include <linux/bpf.h>

#include <algorithm>
#include <functional>
#include <map>

#include "codegen/bpf/ir_helpers.h"
#include "codegen/bpf/lower_api.h"
#include "codegen/bpf/lower_expr.h"
#include "codegen/bpf/lower_formatted.h"
#include "codegen/bpf/lower_maps.h"
#include "codegen/bpf/lower_nccl.h"
#include "codegen/bpf/send_event.h"
#include "codegen/int_ops.h"
#include "codegen/layout/value_format.h"
#include "stdlib/functions.h"
#include "stdlib/registers.h"

namespace gpubt::codegen::bpf {

using namespace frontend;
using stdlib::FunctionId;

namespace {

// Lays ARGS out at 8-aligned offsets and sends them as a Printf / PrintValue event.
void send_values(LowerCtx &c, abi::EventKind kind, std::string format,
                 const std::vector<const Expr *> &args,
                 const frontend::SemanticInfo::DiagnosticFrame *frame = nullptr) {
  uint32_t off = 0;
  abi::FormatSpec fs = layout::value_format(std::move(format), args, &off);
  if (frame) {
    fs.to_stderr = true;
    fs.before = frame->before;
    fs.after = frame->after;
  }
  uint32_t index = c.spec->formats.size();
  c.spec->formats.push_back(fs);
  // Values first (they may use scratch and helpers), then the event buffer.
  std::vector<Val> vals;
  for (const Expr *a : args)
    vals.push_back(lower_expr(c, *a));
  // --timeline: a printf says when and where it happened, after its arguments.
  bool stamped = kind == abi::EventKind::Printf && c.spec->timeline;
  uint32_t size = off + (stamped ? sizeof(abi::EventStamp) : 0);
  send_event(c, kind, index, size, [&](llvm::Value *payload) {
    zero_bytes(c, payload, 8, off);
    if (stamped)
      store_stamp(c, byte_ptr(c, payload, off));
    for (size_t i = 0; i < args.size(); ++i) {
      Type t = args[i]->type;
      if (t.is_aggregate())
        t = Type::integer(8, t.is_signed);
      store_value(c, byte_ptr(c, payload, fs.args[i].offset), 8, t, vals[i], args[i]->type);
    }
  });
}

const MapExpr *map_arg(LowerCtx &c, const CallExpr &call) {
  if (call.args.empty() || call.args[0]->kind != ExprKind::Map) {
    set_error(c, "BUG: " + call.name + "() has no map argument");
    return nullptr;
  }
  return &call.args[0]->as<MapExpr>();
}

void map_event(LowerCtx &c, const CallExpr &call, abi::EventKind kind) {
  if (const MapExpr *m = map_arg(c, call)) {
    MapTarget t = find_map(c, m->name);
    if (t.info)
      send_event(c, kind, t.index, 0);
  }
}

// print(@m[, top[, div]]): the map's index, then top and div (0: absent) as the payload.
void print_map_event(LowerCtx &c, const CallExpr &call) {
  const MapExpr *m = map_arg(c, call);
  MapTarget t = m ? find_map(c, m->name) : MapTarget{};
  if (!t.info)
    return;
  llvm::Value *opts[2] = {c.b.getInt64(0), c.b.getInt64(0)};
  for (size_t i = 1; i < call.args.size() && i < 3; ++i)
    opts[i - 1] = lower_expr(c, *call.args[i]).v;
  send_event(c, abi::EventKind::PrintMap, t.index, 16, [&](llvm::Value *payload) {
    c.b.CreateAlignedStore(opts[0], payload, llvm::Align(8));
    c.b.CreateAlignedStore(opts[1], byte_ptr(c, payload, 8), llvm::Align(8));
  });
}

// kaddr() and uaddr(): the address check_types made sure resolve_types found.
Val lower_nccl(LowerCtx &c, const CallExpr &call, const MapExpr *) {
  return lower_nccl_call(c, *call.id, lower_expr(c, *call.args[0]).v);
}

Val symbol_address(LowerCtx &c, const CallExpr &call) {
  auto it = c.sema->symbol_addresses.find(&call);
  if (it == c.sema->symbol_addresses.end()) {
    set_error(c, "BUG: " + call.name + "(): the symbol was not resolved");
    return {c.b.getInt64(0)};
  }
  return {c.b.getInt64(it->second)};
}

// percpu_kaddr("var"[, cpu]): the variable's BTF id loaded as a `ld_imm64 BPF_PSEUDO_BTF_ID`
// (the verifier knows it as a per-CPU pointer), then its copy on CPU (bpf_per_cpu_ptr: NULL for a
// CPU there is not) or on this one (bpf_this_cpu_ptr).
Val percpu_kaddr(LowerCtx &c, const CallExpr &call) {
  auto it = c.sema->percpu_var_ids.find(&call);
  if (it == c.sema->percpu_var_ids.end()) {
    set_error(c, "BUG: percpu_kaddr(): the variable was not resolved");
    return {c.b.getInt64(0)};
  }
  llvm::Value *var = c.b.CreateIntToPtr(pseudo_imm64(c, 3 /* BPF_PSEUDO_BTF_ID */, it->second),
                                        c.b.getPtrTy());
  llvm::Value *p =
      call.args.size() == 2
          ? call_helper(c, 153 /* bpf_per_cpu_ptr */,
                        {var, c.b.CreateTrunc(lower_expr(c, *call.args[1]).v, c.b.getInt32Ty())},
                        c.b.getPtrTy())
          : call_helper(c, 154 /* bpf_this_cpu_ptr */, {var}, c.b.getPtrTy());
  return {c.b.CreatePtrToInt(p, c.b.getInt64Ty())};
}

Val str(LowerCtx &c, const CallExpr &call) {
  uint32_t size = call.type.size ? call.type.size : 64;
  if (call.args[0]->type.kind == TypeKind::String) {
    // A tracepoint's __data_loc or char[] field, already read as a string: copied to size.
    Val v = lower_expr(c, *call.args[0]);
    llvm::Value *buf = scratch_slot(c, size);
    zero_bytes(c, buf, 8, size);
    copy_bytes(c, buf, 8, v.v, v.align, std::min(size, call.args[0]->type.size) - 1);
    return {buf, 8};
  }
  llvm::Value *src = lower_expr(c, *call.args[0]).v;
  llvm::Value *n = c.b.getInt64(size);
  if (call.args.size() > 1) {
    // str(p, len) reads len characters plus the NUL, at most the buffer.
    auto *want = c.b.CreateAdd(lower_expr(c, *call.args[1]).v, c.b.getInt64(1));
    n = c.b.CreateSelect(c.b.CreateICmpULT(want, n), want, n);
  }
  llvm::Value *buf = scratch_slot(c, size);
  zero_bytes(c, buf, 8, size);
  // TODO: bpftrace 0.17 reads an empty string from a user page not yet faulted in; a sleepable
  // uprobe with bpf_copy_from_user would fix that.
  call_helper(c, BPF_FUNC_probe_read_user_str,
              {buf, c.b.CreateTrunc(n, c.b.getInt32Ty()),
               c.b.CreateIntToPtr(src, c.b.getPtrTy())});
  return {buf, 8};
}

// printf, system, cat, errorf and warnf: the format's arguments, sent for user space to format
// (errorf's and warnf's inside their diagnostic, printed to stderr).
Val formatted_event(LowerCtx &c, const CallExpr &call, abi::EventKind kind) {
  std::vector<const Expr *> args;
  for (size_t i = 1; i < call.args.size(); ++i)
    args.push_back(call.args[i].get());
  std::string fmt =
      call.args[0]->kind == ExprKind::String ? call.args[0]->as<StringExpr>().value : std::string();
  auto frame = c.sema->diagnostic_frames.find(&call);
  if (frame == c.sema->diagnostic_frames.end())
    send_values(c, kind, fmt, args);
  else if (!frame->second.silent)
    send_values(c, kind, fmt, args, &frame->second);
  return {nullptr};
}

Val printf_event(LowerCtx &c, const CallExpr &call, const MapExpr *) {
  return formatted_event(c, call, abi::EventKind::Printf);
}

using CallFn = std::function<Val(LowerCtx &, const CallExpr &, const MapExpr *target)>;

// debugf(fmt, ...): bpf_trace_printk(fmt, size, args) with the format in the probe's memory and
// each value as a word (a string as its address, which the kernel reads for %s).
Val debugf(LowerCtx &c, const CallExpr &call, const MapExpr *) {
  const auto &fmt = call.args[0]->as<frontend::StringExpr>();
  frontend::StringExpr text;
  text.value = fmt.value;
  text.type = Type::string(uint32_t(fmt.value.size() + 1)); // the kernel wants the NUL counted
  std::vector<llvm::Value *> args = {lower_expr(c, text).v, c.b.getInt32(text.type.size)};
  for (size_t i = 1; i < call.args.size(); i++)
    args.push_back(lower_expr(c, *call.args[i]).v);
  call_helper(c, BPF_FUNC_trace_printk, args);
  return {nullptr};
}

Val aggregate(LowerCtx &c, const CallExpr &call, const MapExpr *target) {
  if (!target) {
    set_error(c, "BUG: " + call.name + "() is not assigned to a map");
    return {c.b.getInt64(0)};
  }
  llvm::Value *v = call.args.empty() ? nullptr : lower_expr(c, *call.args[0]).v;
  update_aggregate(c, *target, v);
  return {c.b.getInt64(0)};
}

const std::map<FunctionId, CallFn> &call_table() {
  static const Val none{nullptr};
  static const std::map<FunctionId, CallFn> table = {
      {FunctionId::Count, aggregate},
      {FunctionId::Sum, aggregate},
      {FunctionId::Avg, aggregate},
      {FunctionId::Min, aggregate},
      {FunctionId::Max, aggregate},
      {FunctionId::Stats, aggregate},
      {FunctionId::Hist, aggregate},
      {FunctionId::Lhist, aggregate},
      {FunctionId::Tseries, aggregate},
      {FunctionId::Printf, printf_event},
      {FunctionId::Errorf, printf_event},
      {FunctionId::Warnf, printf_event},
      {FunctionId::Debugf, debugf},
      {FunctionId::System,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) -> Val {
         return formatted_event(c, call, abi::EventKind::System);
       }},
      {FunctionId::Cat,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) -> Val {
         return formatted_event(c, call, abi::EventKind::Cat);
       }},
      {FunctionId::Print,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) -> Val {
         const Expr &a = *call.args[0];
         if (a.kind == ExprKind::Map && a.as<MapExpr>().keys.empty())
           print_map_event(c, call);
         else
           send_values(c, abi::EventKind::PrintValue, "", {&a});
         return none;
       }},
      {FunctionId::Clear,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) -> Val {
         map_event(c, call, abi::EventKind::ClearMap);
         return none;
       }},
      {FunctionId::Zero,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) -> Val {
         map_event(c, call, abi::EventKind::ZeroMap);
         return none;
       }},
      {FunctionId::Delete,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) -> Val {
         const MapExpr *m = map_arg(c, call);
         return {m ? delete_map_entry(c, *m) : nullptr};
       }},
      {FunctionId::Len,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) -> Val {
         const MapExpr *m = map_arg(c, call);
         return {m ? map_length(c, *m) : nullptr};
       }},
      {FunctionId::HasKey,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) -> Val {
         const MapExpr *m = map_arg(c, call);
         return {m ? map_has_key(c, *m) : nullptr};
       }},
      {FunctionId::Exit,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) -> Val {
         if (call.args.empty()) {
           send_event(c, abi::EventKind::Exit, 0, 0);
         } else { // exit(code): the code as the payload
           llvm::Value *code = lower_expr(c, *call.args[0]).v;
           send_event(c, abi::EventKind::Exit, 0, 8, [&](llvm::Value *payload) {
             c.b.CreateAlignedStore(code, payload, llvm::Align(8));
           });
         }
         // bpftrace stops the probe's remaining actions after exit().
         c.b.CreateRet(c.b.getInt64(0));
         start_dead_block(c);
         return none;
       }},
      {FunctionId::Time,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) -> Val {
         std::string fmt = "%H:%M:%S\n";
         if (!call.args.empty() && call.args[0]->kind == ExprKind::String)
           fmt = call.args[0]->as<StringExpr>().value;
         uint32_t index = c.spec->time_formats.size();
         c.spec->time_formats.push_back(fmt);
         send_event(c, abi::EventKind::Time, index, 0);
         return none;
       }},
      {FunctionId::Str,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) -> Val { return str(c, call); }},
      {FunctionId::Uptr,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) -> Val {
         return lower_expr(c, *call.args[0]);
       }},
      {FunctionId::Kptr,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) -> Val {
         return lower_expr(c, *call.args[0]);
       }},
      {FunctionId::Deref,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) -> Val {
         llvm::Value *addr = lower_expr(c, *call.args[0]).v;
         llvm::Value *slot = stack_i64(c);
         c.b.CreateStore(c.b.getInt64(0), slot);
         call_helper(c, BPF_FUNC_probe_read_user,
                     {slot, c.b.getInt32(8), c.b.CreateIntToPtr(addr, c.b.getPtrTy())});
         return {c.b.CreateLoad(c.b.getInt64Ty(), slot)};
       }},
      {FunctionId::Reg,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) -> Val {
         auto off = stdlib::pt_regs_offset(call.args[0]->as<StringExpr>().value);
         return {c.b.CreateAlignedLoad(c.b.getInt64Ty(), byte_ptr(c, c.regs, off.value_or(0)),
                                       llvm::Align(8))};
       }},
      {FunctionId::Bswap,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) -> Val {
         llvm::Value *v = lower_expr(c, *call.args[0]).v;
         uint32_t bits = call.type.size * 8;
         if (bits < 16) // one byte: nothing to swap
           return {normalize(c, v, call.type)};
         auto *narrow = c.b.CreateTrunc(v, c.b.getIntNTy(bits));
         auto *swapped = c.b.CreateUnaryIntrinsic(llvm::Intrinsic::bswap, narrow);
         return {c.b.CreateZExt(swapped, c.b.getInt64Ty())};
       }},
      {FunctionId::Popcount,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) -> Val {
         return {popcount_int(c.b, lower_expr(c, *call.args[0]).v, call.args[0]->type)};
       }},
      {FunctionId::Strncmp,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) -> Val {
         Val a = lower_expr(c, *call.args[0]), b = lower_expr(c, *call.args[1]);
         int64_t n = call.args[2]->kind == ExprKind::Integer
                         ? call.args[2]->as<IntegerExpr>().value : 0;
         auto *eq = strings_equal(c, a, call.args[0]->type.size, b, call.args[1]->type.size,
                                  static_cast<uint32_t>(std::max<int64_t>(n, 0)));
         return {c.b.CreateZExt(c.b.CreateNot(eq), c.b.getInt64Ty())};
       }},
      {FunctionId::Strftime,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) -> Val {
         return lower_expr(c, *call.args[1]); // the time; the format travels in the type
       }},
      {FunctionId::Sizeof,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) -> Val {
         return {c.b.getInt64(call.args[0]->type.size)};
       }},
      {FunctionId::Buf,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) { return lower_buf(c, call); }},
      {FunctionId::Ntop,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) { return lower_ntop(c, call); }},
      {FunctionId::Pton,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) { return lower_pton(c, call); }},
      {FunctionId::Macaddr,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) { return lower_macaddr(c, call); }},
      {FunctionId::Strcontains,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) {
         return lower_strcontains(c, call);
       }},
      {FunctionId::Strlen,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) { return lower_strlen(c, call); }},
      {FunctionId::Join,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) -> Val {
         lower_join(c, call);
         return none;
       }},
      {FunctionId::Kaddr,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) { return symbol_address(c, call); }},
      {FunctionId::Uaddr,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) { return symbol_address(c, call); }},
      {FunctionId::PercpuKaddr,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) { return percpu_kaddr(c, call); }},
      // Values printed in a form of their own; the integer is all the probe computes.
      {FunctionId::Usym,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) { return lower_expr(c, *call.args[0]); }},
      {FunctionId::Strerror,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) { return lower_expr(c, *call.args[0]); }},
      {FunctionId::SignalName,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) { return lower_expr(c, *call.args[0]); }},
      {FunctionId::CgroupPath,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) { return lower_expr(c, *call.args[0]); }},
      {FunctionId::Kname,
       [](LowerCtx &c, const CallExpr &call, const MapExpr *) -> Val {
         return lower_kname(c, lower_expr(c, *call.args[0]).v);
       }},
      {FunctionId::NcclRank, lower_nccl},
      {FunctionId::NcclNranks, lower_nccl},
      {FunctionId::NcclCommId, lower_nccl},
      {FunctionId::NcclSeq, lower_nccl},
      {FunctionId::NcclNested, lower_nccl},
  };
  return table;
}

} // namespace

bool is_aggregation(const CallExpr &call) {
  return call.id && stdlib::function_info(*call.id).kind == stdlib::FunctionKind::Aggregation;
}

Val lower_call(LowerCtx &c, const CallExpr &call, const MapExpr *target) {
  auto it = call.id ? call_table().find(*call.id) : call_table().end();
  if (it == call_table().end()) {
    set_error(c, "BUG: function " + call.name + "() has no host lowering");
    return {c.b.getInt64(0)};
  }
  Val v = it->second(c, call, target);
  if (!v.v)
    v.v = c.b.getInt64(0);
  return v;
}

} // namespace gpubt::codegen::bpf
