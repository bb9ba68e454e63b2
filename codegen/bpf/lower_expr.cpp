// Expressions -> IR: literals, variables, map reads, operators, casts, tuples.
#include "codegen/bpf/lower_expr.h"

#include <algorithm>

#include "codegen/bpf/ir_helpers.h"
#include "codegen/bpf/lower_api.h"
#include "codegen/int_ops.h"
#include "codegen/ir_control.h"
#include "codegen/bpf/lower_maps.h"
#include "codegen/bpf/lower_pointer.h"

namespace gpubt::codegen::bpf {

using namespace frontend;

llvm::Value *truthy(LowerCtx &c, Val v) {
  if (!v.v->getType()->isIntegerTy())
    return c.b.getTrue();
  return c.b.CreateICmpNE(v.v, llvm::ConstantInt::get(v.v->getType(), 0));
}

static llvm::Value *to_i64(LowerCtx &c, llvm::Value *i1) {
  return c.b.CreateZExt(i1, c.b.getInt64Ty());
}

LowerCtx::Var &variable(LowerCtx &c, const std::string &name, const Type &type) {
  auto it = c.vars.find(name);
  if (it != c.vars.end())
    return it->second;
  LowerCtx::Var v;
  v.type = type;
  auto pv = c.sema->vars.find(c.probe);
  if (pv != c.sema->vars.end()) {
    auto t = pv->second.find(name);
    if (t != pv->second.end() && !t->second.is_none())
      v.type = t->second;
  }
  v.ptr = is_memory_type(v.type) ? scratch_slot(c, v.type.size) : stack_i64(c);
  return c.vars[name] = v;
}

void assign_variable(LowerCtx &c, const std::string &name, Val v, const Type &type) {
  auto &var = variable(c, name, type);
  store_value(c, var.ptr, 8, var.type, v, type);
}

llvm::Value *int_binop(LowerCtx &c, BinaryOp op, llvm::Value *l, llvm::Value *r, bool is_signed,
                       const Type &result) {
  return codegen::int_binop(c.b, op, l, r, is_signed, result);
}

// Straight-line selects, no loop for the verifier to bound.
llvm::Value *strings_equal(LowerCtx &c, Val a, uint32_t na, Val b2, uint32_t nb, uint32_t limit) {
  auto &b = c.b;
  llvm::Value *eq = b.getTrue(), *done = b.getFalse();
  for (uint32_t i = 0; i < std::min({na, nb, limit}); ++i) {
    auto *ca = b.CreateLoad(b.getInt8Ty(), byte_ptr(c, a.v, i));
    auto *cb = b.CreateLoad(b.getInt8Ty(), byte_ptr(c, b2.v, i));
    auto *diff = b.CreateICmpNE(ca, cb);
    eq = b.CreateSelect(done, eq, b.CreateNot(diff));
    done = b.CreateOr(done, b.CreateOr(diff, b.CreateICmpEQ(ca, b.getInt8(0))));
  }
  return eq;
}

static Val lower_logical(LowerCtx &c, const BinaryExpr &e) {
  llvm::Value *l = truthy(c, lower_expr(c, *e.lhs));
  return {to_i64(c, emit_short_circuit(c.b, c.fn, e.op == BinaryOp::LogicalAnd, l, [&] {
            return truthy(c, lower_expr(c, *e.rhs));
          }))};
}

static Val lower_binary(LowerCtx &c, const BinaryExpr &e) {
  if (e.op == BinaryOp::LogicalAnd || e.op == BinaryOp::LogicalOr)
    return lower_logical(c, e);
  Val l = lower_expr(c, *e.lhs);
  Val r = lower_expr(c, *e.rhs);
  if (e.lhs->type.kind == TypeKind::String && e.rhs->type.kind == TypeKind::String) {
    llvm::Value *eq = strings_equal(c, l, e.lhs->type.size, r, e.rhs->type.size);
    if (e.op == BinaryOp::Ne)
      eq = c.b.CreateNot(eq);
    return {to_i64(c, eq)};
  }
  // Arrays: same type (check_types), equal bytes. Buffers: the length byte first, then the data
  // (zero past the length), so unequal lengths differ.
  if (e.lhs->type.kind == TypeKind::Array || e.lhs->type.kind == TypeKind::Buffer) {
    llvm::Value *eq = c.b.getTrue();
    uint32_t size = std::min(e.lhs->type.size, e.rhs->type.size);
    for (uint32_t off = 0, n = 8; off < size; off += n) {
      while (off + n > size) // 8-byte words, then 4, 2, 1 for the tail
        n /= 2;
      auto word = [&](Val v) {
        return load_int(c, byte_ptr(c, v.v, off), align_at(v.align, off), n, false);
      };
      eq = c.b.CreateAnd(eq, c.b.CreateICmpEQ(word(l), word(r)));
    }
    if (e.op == BinaryOp::Ne)
      eq = c.b.CreateNot(eq);
    return {to_i64(c, eq)};
  }
  if (!l.v->getType()->isIntegerTy() || !r.v->getType()->isIntegerTy()) {
    set_error(c, "codegen: operator on non-integer operands " + to_string(e.lhs->type) + ", " +
                     to_string(e.rhs->type));
    return {c.b.getInt64(0)};
  }
  bool is_signed = e.lhs->type.is_signed && e.rhs->type.is_signed;
  if (e.type.kind == TypeKind::Pointer) { // p + n, n + p, p - n: n counts pointees
    bool left = e.lhs->type.kind == TypeKind::Pointer;
    llvm::Value *step = c.b.getInt64(pointer_step(e.type));
    (left ? r : l).v = c.b.CreateMul((left ? r : l).v, step);
  }
  return {int_binop(c, e.op, l.v, r.v, is_signed, e.type)};
}

static Val lower_incdec(LowerCtx &c, const UnaryExpr &e) {
  bool inc = e.op == UnaryOp::PreInc || e.op == UnaryOp::PostInc;
  bool post = e.op == UnaryOp::PostInc || e.op == UnaryOp::PostDec;
  const Expr &target = *e.operand;
  llvm::Value *old = lower_expr(c, target).v;
  int64_t step = pointer_step(target.type);
  auto *nv = normalize(c, c.b.CreateAdd(old, c.b.getInt64(inc ? step : -step)), target.type);
  if (target.kind == ExprKind::Map)
    write_map(c, target.as<MapExpr>(), {nv}, target.type);
  else if (target.kind == ExprKind::Variable)
    assign_variable(c, target.as<VariableExpr>().name, {nv}, target.type);
  else
    set_error(c, "codegen: ++/-- needs a map or a variable");
  return {post ? old : nv};
}

static Val lower_unary(LowerCtx &c, const UnaryExpr &e) {
  switch (e.op) {
  case UnaryOp::Neg:
    return {normalize(c, c.b.CreateNeg(lower_expr(c, *e.operand).v), e.type)};
  case UnaryOp::Not:
    return {to_i64(c, c.b.CreateNot(truthy(c, lower_expr(c, *e.operand))))};
  case UnaryOp::BitNot:
    return {normalize(c, c.b.CreateNot(lower_expr(c, *e.operand).v), e.type)};
  case UnaryOp::Deref:
    return lower_deref(c, e);
  default:
    return lower_incdec(c, e);
  }
}

static Val lower_ternary(LowerCtx &c, const TernaryExpr &e) {
  llvm::Value *cond = truthy(c, lower_expr(c, *e.cond));
  auto *then_bb = llvm::BasicBlock::Create(c.ctx, "tern.then", c.fn);
  auto *else_bb = llvm::BasicBlock::Create(c.ctx, "tern.else", c.fn);
  auto *done = llvm::BasicBlock::Create(c.ctx, "tern.done", c.fn);
  bool mem = is_memory_type(e.type);
  llvm::Value *out = mem ? scratch_slot(c, e.type.size) : nullptr;
  c.b.CreateCondBr(cond, then_bb, else_bb);
  llvm::Value *vals[2];
  llvm::BasicBlock *ends[2];
  const Expr *arms[2] = {e.then_expr.get(), e.else_expr.get()};
  llvm::BasicBlock *starts[2] = {then_bb, else_bb};
  for (int i = 0; i < 2; ++i) {
    c.b.SetInsertPoint(starts[i]);
    Val v = lower_expr(c, *arms[i]);
    if (mem)
      store_value(c, out, 8, e.type, v, arms[i]->type);
    else
      vals[i] = normalize(c, v.v, e.type);
    ends[i] = c.b.GetInsertBlock();
    c.b.CreateBr(done);
  }
  c.b.SetInsertPoint(done);
  if (mem)
    return {out, 8};
  auto *phi = c.b.CreatePHI(c.b.getInt64Ty(), 2);
  phi->addIncoming(vals[0], ends[0]);
  phi->addIncoming(vals[1], ends[1]);
  return {phi};
}

static Val lower_string(LowerCtx &c, const StringExpr &e) {
  uint32_t size = std::max<uint32_t>(e.type.size, e.value.size() + 1);
  llvm::Value *buf = scratch_slot(c, size);
  uint32_t words = (size + 7) / 8;
  for (uint32_t w = 0; w < words; ++w) {
    uint64_t v = 0;
    for (uint32_t i = 0; i < 8; ++i) {
      size_t at = w * 8 + i;
      if (at < e.value.size())
        v |= uint64_t(uint8_t(e.value[at])) << (8 * i);
    }
    c.b.CreateAlignedStore(c.b.getInt64(v), byte_ptr(c, buf, w * 8), llvm::Align(8));
  }
  return {buf, 8};
}

static Val lower_tuple(LowerCtx &c, const TupleExpr &e) {
  llvm::Value *buf = scratch_slot(c, e.type.size);
  zero_bytes(c, buf, 8, e.type.size);
  auto offs = tuple_offsets(e.type.elems, nullptr);
  for (size_t i = 0; i < e.elems.size() && i < offs.size(); ++i) {
    Val v = lower_expr(c, *e.elems[i]);
    store_value(c, byte_ptr(c, buf, offs[i]), align_at(8, offs[i]), e.type.elems[i], v,
                e.elems[i]->type);
  }
  return {buf, 8};
}

static Val lower_field(LowerCtx &c, const FieldExpr &e) {
  if (is_builtin(*e.base, BuiltinId::Args))
    return c.ap->provider == Provider::Tracepoint ? lower_tracepoint_arg(c, e)
                                                  : lower_api_arg(c, e);
  const Type &bt = e.base->type;
  if (bt.kind == TypeKind::Record || bt.kind == TypeKind::Pointer)
    return lower_record_field(c, e);
  if (bt.kind != TypeKind::Tuple) {
    set_error(c, "codegen: field access on " + to_string(bt));
    return {c.b.getInt64(0)};
  }
  Val base = lower_expr(c, *e.base);
  size_t i = std::stoul(e.field);
  auto offs = tuple_offsets(bt.elems, nullptr);
  if (i >= offs.size()) {
    set_error(c, "codegen: tuple index " + e.field + " out of range");
    return {c.b.getInt64(0)};
  }
  return load_value(c, byte_ptr(c, base.v, offs[i]), align_at(base.align, offs[i]),
                    bt.elems[i]);
}

static Val lower_expr_here(LowerCtx &c, const Expr &e);

Val lower_expr(LowerCtx &c, const Expr &e) {
  frontend::SourceSpan outer = c.span;
  c.span = e.span;
  Val v = lower_expr_here(c, e);
  c.span = outer;
  return v;
}

static Val lower_expr_here(LowerCtx &c, const Expr &e) {
  switch (e.kind) {
  case ExprKind::Integer:
    return {c.b.getInt64(e.as<IntegerExpr>().value)};
  case ExprKind::String:
    return lower_string(c, e.as<StringExpr>());
  case ExprKind::Builtin:
    return lower_builtin(c, e.as<BuiltinExpr>());
  case ExprKind::Variable: {
    auto &var = variable(c, e.as<VariableExpr>().name, e.type);
    return load_value(c, var.ptr, 8, var.type);
  }
  case ExprKind::Map:
    return read_map(c, e.as<MapExpr>());
  case ExprKind::Call:
    return lower_call(c, e.as<CallExpr>(), nullptr);
  case ExprKind::Binary:
    return lower_binary(c, e.as<BinaryExpr>());
  case ExprKind::Unary:
    return lower_unary(c, e.as<UnaryExpr>());
  case ExprKind::Ternary:
    return lower_ternary(c, e.as<TernaryExpr>());
  case ExprKind::Cast:
    return {normalize(c, lower_expr(c, *e.as<CastExpr>().operand).v, e.type)};
  case ExprKind::Field:
    return lower_field(c, e.as<FieldExpr>());
  case ExprKind::Tuple:
    return lower_tuple(c, e.as<TupleExpr>());
  case ExprKind::Index:
    return lower_index(c, e.as<IndexExpr>());
  case ExprKind::SizeofType:
    return {c.b.getInt64(int64_t(e.as<SizeofTypeExpr>().size))};
  }
  return {c.b.getInt64(0)};
}

} // namespace gpubt::codegen::bpf
