// The core's expressions: literals, variables, operators, casts, tuples (lowering.h). What a
// back end lowers its own way goes through the hooks.
#include "codegen/common/lowering.h"

#include "codegen/int_ops.h"
#include "codegen/ir_control.h"
#include "frontend/passes/tuple_index.h"

namespace gpubt::codegen {

using namespace frontend;

uint32_t pointer_step(const Type &t) {
  if (t.kind != TypeKind::Pointer)
    return 1;
  const Type &pointee = t.elems[0];
  return pointee.size ? pointee.size : 1;
}

llvm::Value *Lowering::truthy(Value v) {
  if (!v.v->getType()->isIntegerTy())
    return b.getTrue();
  return b.CreateICmpNE(v.v, llvm::ConstantInt::get(v.v->getType(), 0));
}

llvm::Value *Lowering::byte_ptr(llvm::Value *base, uint64_t offset) {
  if (offset == 0)
    return base;
  return b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), base, offset);
}

void Lowering::set_error(std::string msg) {
  if (error.empty())
    error = std::move(msg);
}

Lowering::Var &Lowering::variable(const std::string &name, const Type &type) {
  auto it = vars.find(name);
  if (it != vars.end())
    return it->second;
  Var v;
  v.type = type;
  if (sema) {
    auto pv = sema->vars.find(probe);
    if (pv != sema->vars.end()) {
      auto t = pv->second.find(name);
      if (t != pv->second.end() && !t->second.is_none())
        v.type = t->second;
    }
  }
  v.ptr = variable_slot(v.type);
  return vars[name] = v;
}

void Lowering::assign_variable(const std::string &name, Value v, const Type &type) {
  auto &var = variable(name, type);
  store(var.ptr, 8, var.type, v, type);
}

static llvm::Value *to_i64(llvm::IRBuilder<> &b, llvm::Value *i1) {
  return b.CreateZExt(i1, b.getInt64Ty());
}

Value Lowering::lower_logical(const BinaryExpr &e) {
  llvm::Value *l = truthy(lower_expr(*e.lhs));
  return {to_i64(b, emit_short_circuit(b, fn, e.op == BinaryOp::LogicalAnd, l,
                                       [&] { return truthy(lower_expr(*e.rhs)); }))};
}

Value Lowering::lower_binary(const BinaryExpr &e) {
  if (e.op == BinaryOp::LogicalAnd || e.op == BinaryOp::LogicalOr)
    return lower_logical(e);
  Value l = lower_expr(*e.lhs);
  Value r = lower_expr(*e.rhs);
  if (auto eq = memory_compare(e, l, r))
    return *eq;
  if (!l.v->getType()->isIntegerTy() || !r.v->getType()->isIntegerTy()) {
    set_error(operator_error(e));
    return {b.getInt64(0)};
  }
  bool is_signed = e.lhs->type.is_signed && e.rhs->type.is_signed;
  if (e.type.kind == TypeKind::Pointer) { // p + n, n + p, p - n: n counts pointees
    bool left = e.lhs->type.kind == TypeKind::Pointer;
    llvm::Value *step = b.getInt64(pointer_step(e.type));
    (left ? r : l).v = b.CreateMul((left ? r : l).v, step);
  }
  return {int_binop(b, e.op, l.v, r.v, is_signed, e.type)};
}

// ++/--: a plain read-modify-write (in gpu probes not atomic across threads, as documented).
Value Lowering::lower_incdec(const UnaryExpr &e) {
  bool inc = e.op == UnaryOp::PreInc || e.op == UnaryOp::PostInc;
  bool post = e.op == UnaryOp::PostInc || e.op == UnaryOp::PostDec;
  const Expr &target = *e.operand;
  llvm::Value *old = lower_expr(target).v;
  int64_t step = pointer_step(target.type);
  auto *nv = normalize_int(b, b.CreateAdd(old, b.getInt64(inc ? step : -step)), target.type);
  if (target.kind == ExprKind::Map)
    map_write(target.as<MapExpr>(), {nv}, target.type);
  else if (target.kind == ExprKind::Variable)
    assign_variable(target.as<VariableExpr>().key(), {nv}, target.type);
  else
    set_error("codegen: ++/-- needs a map or a variable");
  return {post ? old : nv};
}

Value Lowering::lower_unary(const UnaryExpr &e) {
  switch (e.op) {
  case UnaryOp::Neg:
    return {normalize_int(b, b.CreateNeg(lower_expr(*e.operand).v), e.type)};
  case UnaryOp::Not:
    return {to_i64(b, b.CreateNot(truthy(lower_expr(*e.operand))))};
  case UnaryOp::BitNot:
    return {normalize_int(b, b.CreateNot(lower_expr(*e.operand).v), e.type)};
  case UnaryOp::Deref:
    return deref_value(e);
  case UnaryOp::AddressOf:
    return address_of(e);
  default:
    return lower_incdec(e);
  }
}

Value Lowering::lower_ternary(const TernaryExpr &e) {
  llvm::Value *cond = truthy(lower_expr(*e.cond));
  auto *then_bb = llvm::BasicBlock::Create(ctx, "tern.then", fn);
  auto *else_bb = llvm::BasicBlock::Create(ctx, "tern.else", fn);
  auto *done = llvm::BasicBlock::Create(ctx, "tern.done", fn);
  bool mem = holds_in_memory(e.type);
  llvm::Value *out = mem ? temp_buffer(e.type.size, false) : nullptr;
  b.CreateCondBr(cond, then_bb, else_bb);
  llvm::Value *vals[2] = {nullptr, nullptr};
  llvm::BasicBlock *ends[2];
  const Expr *arms[2] = {e.then_expr.get(), e.else_expr.get()};
  llvm::BasicBlock *starts[2] = {then_bb, else_bb};
  for (int i = 0; i < 2; ++i) {
    b.SetInsertPoint(starts[i]);
    Value v = lower_expr(*arms[i]);
    if (mem)
      store(out, 8, e.type, v, arms[i]->type);
    else
      vals[i] = normalize_int(b, v.v, e.type);
    ends[i] = b.GetInsertBlock();
    b.CreateBr(done);
  }
  b.SetInsertPoint(done);
  if (mem)
    return {out, 8};
  auto *phi = b.CreatePHI(b.getInt64Ty(), 2);
  phi->addIncoming(vals[0], ends[0]);
  phi->addIncoming(vals[1], ends[1]);
  return {phi};
}

Value Lowering::lower_tuple(const TupleExpr &e) {
  llvm::Value *buf = temp_buffer(e.type.size, true);
  auto offs = tuple_offsets(e.type.elems, nullptr);
  for (size_t i = 0; i < e.elems.size() && i < offs.size(); ++i) {
    Value v = lower_expr(*e.elems[i]);
    store(byte_ptr(buf, offs[i]), align_at(8, offs[i]), e.type.elems[i], v, e.elems[i]->type);
  }
  return {buf, 8};
}

Value Lowering::lower_field(const FieldExpr &e) {
  const Type &bt = e.base->type;
  if (bt.kind != TypeKind::Tuple)
    return field_value(e);
  return lower_tuple_elem(*e.base, bt.is_named_tuple() ? size_t(field_index(bt, e.field))
                                                       : tuple_index(e.field));
}

// `t.1`, `t[1 - 1]`, `r.name`: element I of the tuple BASE.
Value Lowering::lower_tuple_elem(const Expr &base_expr, size_t i) {
  const Type &bt = base_expr.type;
  Value base = lower_expr(base_expr);
  auto offs = tuple_offsets(bt.elems, nullptr);
  if (i >= offs.size()) {
    set_error("codegen: tuple index " + std::to_string(i) + " out of range");
    return {b.getInt64(0)};
  }
  return load(byte_ptr(base.v, offs[i]), align_at(base.align, offs[i]), bt.elems[i]);
}

Value Lowering::lower_expr(const Expr &e) {
  SourceSpan outer = span;
  span = e.span;
  Value v = lower_expr_here(e);
  span = outer;
  return v;
}

// (int8[8])x: the operand's bytes as an array. A string is its bytes already (check_types
// allows only one of the array's size); an integer is stored, zero-extended to 8 bytes (an array
// wider than the integer is at most 8), where the array reads its first bytes.
Value Lowering::lower_array_cast(const CastExpr &c) {
  Value v = lower_expr(*c.operand);
  if (holds_in_memory(c.operand->type))
    return v;
  llvm::Value *buf = temp_buffer(8, false);
  llvm::Value *x = b.CreateZExtOrTrunc(v.v, b.getIntNTy(c.operand->type.size * 8));
  b.CreateAlignedStore(b.CreateZExt(x, b.getInt64Ty()), buf, llvm::Align(8));
  return {buf, 8};
}

Value Lowering::lower_expr_here(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Integer:
    return {b.getInt64(e.as<IntegerExpr>().value)};
  case ExprKind::String:
    return string_value(e.as<StringExpr>());
  case ExprKind::Builtin:
    return builtin_value(e.as<BuiltinExpr>());
  case ExprKind::Variable: {
    auto &var = variable(e.as<VariableExpr>().key(), e.type);
    return load(var.ptr, 8, var.type);
  }
  case ExprKind::Map:
    return map_read(e.as<MapExpr>());
  case ExprKind::Call:
    return call_value(e.as<CallExpr>());
  case ExprKind::Binary:
    return lower_binary(e.as<BinaryExpr>());
  case ExprKind::Unary:
    return lower_unary(e.as<UnaryExpr>());
  case ExprKind::Ternary:
    return lower_ternary(e.as<TernaryExpr>());
  case ExprKind::Cast: {
    if (e.type.kind == TypeKind::Array)
      return lower_array_cast(e.as<CastExpr>());
    llvm::Value *v = lower_expr(*e.as<CastExpr>().operand).v;
    if (e.type.is_bool) // (bool)x: whether x is not 0
      return {b.CreateZExt(b.CreateICmpNE(normalize_int(b, v, Type::integer()), b.getInt64(0)),
                           b.getInt64Ty())};
    return {normalize_int(b, v, e.type)};
  }
  case ExprKind::Field:
    return lower_field(e.as<FieldExpr>());
  case ExprKind::Tuple:
    return lower_tuple(e.as<TupleExpr>());
  case ExprKind::Index:
    if (auto &x = e.as<IndexExpr>(); x.tuple_elem)
      return lower_tuple_elem(*x.base, *x.tuple_elem);
    return index_value(e.as<IndexExpr>());
  case ExprKind::SizeofType:
    return {b.getInt64(int64_t(e.as<SizeofTypeExpr>().size))};
  case ExprKind::Block: { // its statements, then its value (0 for a block without one)
    lower_block(*e.as<BlockExpr>().block);
    const auto &value = e.as<BlockExpr>().value;
    return value ? lower_expr(*value) : Value{b.getInt64(0)};
  }
  }
  return {b.getInt64(0)};
}

} // namespace gpubt::codegen
