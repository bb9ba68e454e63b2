// Expressions, statements and gpu builtins -> device IR. Builtins are one table by
// stdlib::BuiltinId; integer operators are shared with the host lowering (codegen/int_ops.h).
#include <cstddef>
#include <functional>

#include "codegen/device/device_context.h"
#include "codegen/int_ops.h"
#include "codegen/ir_control.h"
#include "runtime/abi/device_abi.h"
#include "stdlib/builtins.h"
#include "stdlib/functions.h"

namespace gpubt::codegen::device {

using namespace frontend;
using stdlib::BuiltinId;

namespace {

llvm::Value *i64_of(DevCtx &c, llvm::Value *i1) { return c.b.CreateZExt(i1, c.b.getInt64Ty()); }

// A clock special (Clock, GlobalTimer); a target that has none makes the probe an error rather
// than let it read a silent 0.
llvm::Value *read_clock(DevCtx &c, Special s) {
  if (std::string why = c.target.unavailable(s); !why.empty())
    set_error(c, why);
  return c.target.special(c.b, s);
}

// Linear thread index inside the block and linear block index inside the grid (x fastest).
llvm::Value *linear_thread_in_block(DevCtx &c) {
  auto &t = c.target;
  auto *bx = t.block_dim(c.b, Dim::X), *by = t.block_dim(c.b, Dim::Y);
  auto *yz =
      c.b.CreateAdd(t.thread_index(c.b, Dim::Y), c.b.CreateMul(t.thread_index(c.b, Dim::Z), by));
  return c.b.CreateAdd(t.thread_index(c.b, Dim::X), c.b.CreateMul(yz, bx));
}

llvm::Value *linear_block(DevCtx &c) {
  auto &t = c.target;
  auto *gx = t.grid_dim(c.b, Dim::X), *gy = t.grid_dim(c.b, Dim::Y);
  auto *yz =
      c.b.CreateAdd(t.block_index(c.b, Dim::Y), c.b.CreateMul(t.block_index(c.b, Dim::Z), gy));
  return c.b.CreateAdd(t.block_index(c.b, Dim::X), c.b.CreateMul(yz, gx));
}

llvm::Value *threads_per_block(DevCtx &c) {
  auto &t = c.target;
  return c.b.CreateMul(c.b.CreateMul(t.block_dim(c.b, Dim::X), t.block_dim(c.b, Dim::Y)),
                       t.block_dim(c.b, Dim::Z));
}

using BuiltinFn = std::function<DVal(DevCtx &)>;

BuiltinFn dim(llvm::Value *(DeviceTarget::*f)(llvm::IRBuilder<> &, Dim) const, Dim d) {
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
  set_error(c, "BUG: function " + call.name + "() has no gpu lowering");
  return {c.b.getInt64(0)};
}

DVal lower_logical(DevCtx &c, const BinaryExpr &e) {
  llvm::Value *l = truthy(c, lower_expr(c, *e.lhs));
  return {i64_of(c, emit_short_circuit(c.b, c.fn, e.op == BinaryOp::LogicalAnd, l,
                                       [&] { return truthy(c, lower_expr(c, *e.rhs)); }))};
}

DVal lower_binary(DevCtx &c, const BinaryExpr &e) {
  if (e.op == BinaryOp::LogicalAnd || e.op == BinaryOp::LogicalOr)
    return lower_logical(c, e);
  DVal l = lower_expr(c, *e.lhs), r = lower_expr(c, *e.rhs);
  if (!l.v->getType()->isIntegerTy() || !r.v->getType()->isIntegerTy()) {
    set_error(c, "operator on " + to_string(e.lhs->type) + " is not supported in gpu probes yet");
    return {c.b.getInt64(0)};
  }
  bool is_signed = e.lhs->type.is_signed && e.rhs->type.is_signed;
  return {int_binop(c.b, e.op, l.v, r.v, is_signed, e.type)};
}

llvm::Value *&variable(DevCtx &c, const std::string &name, const Type &type) {
  auto &slot = c.vars[name];
  if (!slot)
    slot = local_buffer(c, is_memory_type(type) ? type.size : 8);
  return slot;
}

Type variable_type(DevCtx &c, const std::string &name, const Type &fallback) {
  auto pv = c.sema->vars.find(c.probe);
  if (pv != c.sema->vars.end())
    if (auto t = pv->second.find(name); t != pv->second.end() && !t->second.is_none())
      return t->second;
  return fallback;
}

void assign_variable(DevCtx &c, const std::string &name, DVal v, const Type &v_type) {
  Type t = variable_type(c, name, v_type);
  store_value(c, variable(c, name, t), t, v, v_type);
}

DVal lower_unary(DevCtx &c, const UnaryExpr &e) {
  switch (e.op) {
  case UnaryOp::Neg:
    return {normalize_int(c.b, c.b.CreateNeg(lower_expr(c, *e.operand).v), e.type)};
  case UnaryOp::Not:
    return {i64_of(c, c.b.CreateNot(truthy(c, lower_expr(c, *e.operand))))};
  case UnaryOp::BitNot:
    return {normalize_int(c.b, c.b.CreateNot(lower_expr(c, *e.operand).v), e.type)};
  case UnaryOp::Deref:
    set_error(c, "codegen: the * operator is not supported in gpu probes");
    return {c.b.getInt64(0)};
  default:
    break;
  }
  // ++/--: plain read-modify-write, not atomic across threads (as documented).
  bool inc = e.op == UnaryOp::PreInc || e.op == UnaryOp::PostInc;
  bool post = e.op == UnaryOp::PostInc || e.op == UnaryOp::PostDec;
  const Expr &target = *e.operand;
  llvm::Value *old = lower_expr(c, target).v;
  auto *nv = normalize_int(c.b, c.b.CreateAdd(old, c.b.getInt64(inc ? 1 : -1)), target.type);
  if (target.kind == ExprKind::Map)
    write_map(c, target.as<MapExpr>(), {nv}, target.type);
  else if (target.kind == ExprKind::Variable)
    assign_variable(c, target.as<VariableExpr>().name, {nv}, target.type);
  return {post ? old : nv};
}

DVal lower_ternary(DevCtx &c, const TernaryExpr &e) {
  llvm::Value *cond = truthy(c, lower_expr(c, *e.cond));
  bool mem = is_memory_type(e.type);
  llvm::Value *out = mem ? local_buffer(c, e.type.size) : nullptr;
  auto *then_bb = llvm::BasicBlock::Create(c.ctx, "tern.then", c.fn);
  auto *else_bb = llvm::BasicBlock::Create(c.ctx, "tern.else", c.fn);
  auto *done = llvm::BasicBlock::Create(c.ctx, "tern.done", c.fn);
  c.b.CreateCondBr(cond, then_bb, else_bb);
  const Expr *arms[2] = {e.then_expr.get(), e.else_expr.get()};
  llvm::BasicBlock *starts[2] = {then_bb, else_bb}, *ends[2];
  llvm::Value *vals[2] = {nullptr, nullptr};
  for (int i = 0; i < 2; ++i) {
    c.b.SetInsertPoint(starts[i]);
    DVal v = lower_expr(c, *arms[i]);
    if (mem)
      store_value(c, out, e.type, v, arms[i]->type);
    else
      vals[i] = normalize_int(c.b, v.v, e.type);
    ends[i] = c.b.GetInsertBlock();
    c.b.CreateBr(done);
  }
  c.b.SetInsertPoint(done);
  if (mem)
    return {out};
  auto *phi = c.b.CreatePHI(c.b.getInt64Ty(), 2);
  phi->addIncoming(vals[0], ends[0]);
  phi->addIncoming(vals[1], ends[1]);
  return {phi};
}

DVal lower_string(DevCtx &c, const StringExpr &e) {
  uint32_t size = std::max<uint32_t>(e.type.size, e.value.size() + 1);
  llvm::Value *buf = local_buffer(c, size);
  for (size_t i = 0; i < e.value.size(); ++i)
    c.b.CreateStore(c.b.getInt8(uint8_t(e.value[i])), byte_ptr(c, buf, i));
  return {buf};
}

DVal lower_tuple(DevCtx &c, const TupleExpr &e) {
  llvm::Value *buf = local_buffer(c, e.type.size);
  auto offs = tuple_offsets(e.type.elems, nullptr);
  for (size_t i = 0; i < e.elems.size() && i < offs.size(); ++i)
    store_value(c, buf, e.type.elems[i], lower_expr(c, *e.elems[i]), e.elems[i]->type, offs[i]);
  return {buf};
}

DVal lower_field(DevCtx &c, const FieldExpr &e) {
  const Type &bt = e.base->type;
  if (bt.kind != TypeKind::Tuple) {
    set_error(c, "field ." + e.field + " is not supported in gpu probes yet");
    return {c.b.getInt64(0)};
  }
  DVal base = lower_expr(c, *e.base);
  size_t i = std::stoul(e.field);
  auto offs = tuple_offsets(bt.elems, nullptr);
  if (i >= offs.size()) {
    set_error(c, "codegen: tuple index " + e.field + " out of range");
    return {c.b.getInt64(0)};
  }
  return load_value(c, byte_ptr(c, base.v, offs[i]), bt.elems[i]);
}

void lower_map_assign(DevCtx &c, const MapAssignStmt &s) {
  const MapExpr &m = *s.map;
  if (s.value->kind == ExprKind::Call) {
    const auto &call = s.value->as<CallExpr>();
    if (call.id && stdlib::function_info(*call.id).kind == stdlib::FunctionKind::Aggregation) {
      update_aggregate(c, m, call.args.empty() ? nullptr : lower_expr(c, *call.args[0]).v);
      return;
    }
  }
  if (s.compound) {
    DVal cur = read_map(c, m), r = lower_expr(c, *s.value);
    bool is_signed = m.type.is_signed && s.value->type.is_signed;
    write_map(c, m, {int_binop(c.b, *s.compound, cur.v, r.v, is_signed, m.type)}, m.type);
    return;
  }
  write_map(c, m, lower_expr(c, *s.value), s.value->type);
}

void lower_var_assign(DevCtx &c, const VarAssignStmt &s) {
  const std::string &name = s.var->name;
  if (s.compound) {
    Type t = variable_type(c, name, s.var->type);
    DVal cur = load_value(c, variable(c, name, t), t), r = lower_expr(c, *s.value);
    bool is_signed = t.is_signed && s.value->type.is_signed;
    assign_variable(c, name, {int_binop(c.b, *s.compound, cur.v, r.v, is_signed, t)}, t);
    return;
  }
  assign_variable(c, name, lower_expr(c, *s.value), s.value->type);
}

void lower_if(DevCtx &c, const IfStmt &s) {
  llvm::Value *cond = truthy(c, lower_expr(c, *s.cond));
  emit_if_else(
      c.b, c.fn, cond, [&] { lower_block(c, *s.then_block); },
      [&] {
        if (s.else_block)
          lower_block(c, *s.else_block);
      });
}

} // namespace

llvm::Value *truthy(DevCtx &c, DVal v) {
  if (!v.v->getType()->isIntegerTy())
    return c.b.getTrue();
  return c.b.CreateICmpNE(v.v, llvm::ConstantInt::get(v.v->getType(), 0));
}

DVal lower_expr(DevCtx &c, const Expr &e) {
  switch (e.kind) {
  case ExprKind::Integer:
    return {c.b.getInt64(e.as<IntegerExpr>().value)};
  case ExprKind::String:
    return lower_string(c, e.as<StringExpr>());
  case ExprKind::Builtin:
    return lower_builtin(c, e.as<BuiltinExpr>());
  case ExprKind::Variable: {
    const auto &name = e.as<VariableExpr>().name;
    Type t = variable_type(c, name, e.type);
    return load_value(c, variable(c, name, t), t);
  }
  case ExprKind::Map:
    return read_map(c, e.as<MapExpr>());
  case ExprKind::Call:
    return lower_call(c, e.as<CallExpr>());
  case ExprKind::Binary:
    return lower_binary(c, e.as<BinaryExpr>());
  case ExprKind::Unary:
    return lower_unary(c, e.as<UnaryExpr>());
  case ExprKind::Ternary:
    return lower_ternary(c, e.as<TernaryExpr>());
  case ExprKind::Cast:
    return {normalize_int(c.b, lower_expr(c, *e.as<CastExpr>().operand).v, e.type)};
  case ExprKind::Field:
    return lower_field(c, e.as<FieldExpr>());
  case ExprKind::Tuple:
    return lower_tuple(c, e.as<TupleExpr>());
  case ExprKind::Index:
    set_error(c, "codegen: the [] operator is not supported in gpu probes");
    return {c.b.getInt64(0)};
  case ExprKind::SizeofType:
    return {c.b.getInt64(int64_t(e.as<SizeofTypeExpr>().size))};
  }
  return {c.b.getInt64(0)};
}

void lower_block(DevCtx &c, const BlockStmt &block) {
  for (const auto &s : block.stmts) {
    switch (s->kind) {
    case StmtKind::Expr:
      lower_expr(c, *s->as<ExprStmt>().expr);
      break;
    case StmtKind::MapAssign:
      lower_map_assign(c, s->as<MapAssignStmt>());
      break;
    case StmtKind::VarAssign:
      lower_var_assign(c, s->as<VarAssignStmt>());
      break;
    case StmtKind::If:
      lower_if(c, s->as<IfStmt>());
      break;
    case StmtKind::Block:
      lower_block(c, s->as<BlockStmt>());
      break;
    case StmtKind::While: // check_types refuses loops in gpu probes
      set_error(c, "while loops are not available in gpu probes");
      break;
    }
  }
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

// The agent's model of the GPU clock against CLOCK_MONOTONIC: offset plus drift.
llvm::Value *device_nsecs(DevCtx &c) {
  c.spec->device.features |= abi::DeviceReadsClock; // the agent then measures the GPU clock
  auto &b = c.b;
  llvm::Value *t = read_clock(c, Special::GlobalTimer);
  auto *since = b.CreateSub(t, ctx_field(c, offsetof(gpubt_device_ctx, clock_base), 8));
  auto *drift = b.CreateAShr(
      b.CreateMul(since, ctx_field(c, offsetof(gpubt_device_ctx, clock_rate), 8)), 32);
  return b.CreateAdd(b.CreateAdd(t, ctx_field(c, offsetof(gpubt_device_ctx, clock_offset_ns), 8)),
                     drift);
}

} // namespace gpubt::codegen::device
