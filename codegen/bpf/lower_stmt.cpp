// Statements -> IR: expression statements, map and variable (compound) assignment, if/else.
#include "codegen/bpf/lower_stmt.h"

#include "codegen/bpf/ir_helpers.h"
#include "codegen/bpf/lower_expr.h"
#include "codegen/bpf/lower_pointer.h"
#include "codegen/bpf/lower_maps.h"
#include "codegen/ir_control.h"

namespace gpubt::codegen::bpf {

using namespace frontend;

namespace {

// `lhs op= rhs` on integers: the current value (already read) combined with the new one.
Val compound_value(LowerCtx &c, BinaryOp op, Val cur, const Type &cur_t, const Expr &rhs,
                   const Type &result_t) {
  Val r = lower_expr(c, rhs);
  if (cur_t.kind == TypeKind::Pointer) // p += n moves n pointees
    r.v = c.b.CreateMul(r.v, c.b.getInt64(pointer_step(cur_t)));
  bool is_signed = cur_t.is_signed && rhs.type.is_signed;
  return {int_binop(c, op, cur.v, r.v, is_signed, result_t)};
}

void lower_map_assign(LowerCtx &c, const MapAssignStmt &s) {
  const MapExpr &m = *s.map;
  if (s.value->kind == ExprKind::Call && is_aggregation(s.value->as<CallExpr>())) {
    lower_call(c, s.value->as<CallExpr>(), &m);
    return;
  }
  if (s.compound) {
    Val cur = read_map(c, m);
    Val v = compound_value(c, *s.compound, cur, m.type, *s.value, m.type);
    write_map(c, m, v, m.type);
    return;
  }
  Val v = lower_expr(c, *s.value);
  write_map(c, m, v, s.value->type);
}

void lower_var_assign(LowerCtx &c, const VarAssignStmt &s) {
  const std::string &name = s.var->name;
  if (s.compound) {
    auto &var = variable(c, name, s.var->type);
    Type t = var.type;
    Val cur = load_value(c, var.ptr, 8, t);
    Val v = compound_value(c, *s.compound, cur, t, *s.value, t);
    assign_variable(c, name, v, t);
    return;
  }
  Val v = lower_expr(c, *s.value);
  assign_variable(c, name, v, s.value->type);
}

void lower_if(LowerCtx &c, const IfStmt &s) {
  llvm::Value *cond = truthy(c, lower_expr(c, *s.cond));
  emit_if_else(c.b, c.fn, cond, [&] { lower_block(c, *s.then_block); },
               [&] {
                 if (s.else_block)
                   lower_block(c, *s.else_block);
               });
}

// The kernel's verifier must see the loop end (bounded loops, kernel >= 5.3).
void lower_while(LowerCtx &c, const WhileStmt &s) {
  auto *head = llvm::BasicBlock::Create(c.ctx, "while.cond", c.fn);
  auto *body = llvm::BasicBlock::Create(c.ctx, "while.body", c.fn);
  auto *done = llvm::BasicBlock::Create(c.ctx, "while.done", c.fn);
  c.b.CreateBr(head);
  c.b.SetInsertPoint(head);
  c.b.CreateCondBr(truthy(c, lower_expr(c, *s.cond)), body, done);
  c.b.SetInsertPoint(body);
  lower_block(c, *s.body);
  c.b.CreateBr(head);
  c.b.SetInsertPoint(done);
}

} // namespace

void lower_stmt(LowerCtx &c, const Stmt &s) {
  switch (s.kind) {
  case StmtKind::Expr:
    lower_expr(c, *s.as<ExprStmt>().expr);
    break;
  case StmtKind::MapAssign:
    lower_map_assign(c, s.as<MapAssignStmt>());
    break;
  case StmtKind::VarAssign:
    lower_var_assign(c, s.as<VarAssignStmt>());
    break;
  case StmtKind::If:
    lower_if(c, s.as<IfStmt>());
    break;
  case StmtKind::Block:
    lower_block(c, s.as<BlockStmt>());
    break;
  case StmtKind::While:
    lower_while(c, s.as<WhileStmt>());
    break;
  }
}

void lower_block(LowerCtx &c, const BlockStmt &block) {
  for (const auto &s : block.stmts)
    lower_stmt(c, *s);
}

} // namespace gpubt::codegen::bpf
