// The core's statements: expression statements, map and variable (compound) assignment,
// if/else, blocks, while and for loops with break/continue, return, and a probe's predicate and
// body (lowering.h).
#include "codegen/common/lowering.h"

#include "codegen/int_ops.h"
#include "codegen/ir_control.h"

namespace gpubt::codegen {

using namespace frontend;

Value Lowering::compound_value(BinaryOp op, Value cur, const Type &cur_t, const Expr &rhs) {
  Value r = lower_expr(rhs);
  if (cur_t.kind == TypeKind::Pointer) // p += n moves n pointees
    r.v = b.CreateMul(r.v, b.getInt64(pointer_step(cur_t)));
  bool is_signed = cur_t.is_signed && rhs.type.is_signed;
  return {int_binop(b, op, cur.v, r.v, is_signed, cur_t)};
}

void Lowering::lower_map_assign(const MapAssignStmt &s) {
  const MapExpr &m = *s.map;
  if (s.value->kind == ExprKind::Call && map_aggregate(m, s.value->as<CallExpr>()))
    return;
  if (s.compound) {
    Value cur = map_read(m);
    map_write(m, compound_value(*s.compound, cur, m.type, *s.value), m.type);
    return;
  }
  Value v = lower_expr(*s.value);
  map_write(m, v, s.value->type);
}

void Lowering::lower_var_assign(const VarAssignStmt &s) {
  const std::string name = s.var->key();
  if (s.compound) {
    auto &var = variable(name, s.var->type);
    Type t = var.type;
    Value cur = load(var.ptr, 8, t);
    assign_variable(name, compound_value(*s.compound, cur, t, *s.value), t);
    return;
  }
  Value v = lower_expr(*s.value);
  assign_variable(name, v, s.value->type);
}

void Lowering::lower_if(const IfStmt &s) {
  llvm::Value *cond = truthy(lower_expr(*s.cond));
  emit_if_else(b, fn, cond, [&] { lower_block(*s.then_block); },
               [&] {
                 if (s.else_block)
                   lower_block(*s.else_block);
               });
}

// The kernel's verifier must see the loop end (bounded loops, kernel >= 5.3). `continue` goes to
// the step (a for loop's $i + 1) or the condition, `break` past the loop.
void Lowering::lower_while(const WhileStmt &s) {
  auto *head = llvm::BasicBlock::Create(ctx, "while.cond", fn);
  auto *body = llvm::BasicBlock::Create(ctx, "while.body", fn);
  auto *step = s.step ? llvm::BasicBlock::Create(ctx, "while.step", fn) : head;
  auto *done = llvm::BasicBlock::Create(ctx, "while.done", fn);
  b.CreateBr(head);
  b.SetInsertPoint(head);
  b.CreateCondBr(truthy(lower_expr(*s.cond)), body, done);
  b.SetInsertPoint(body);
  lower_loop_body(*s.body, step, done);
  b.CreateBr(step);
  if (s.step) {
    b.SetInsertPoint(step);
    lower_stmt(*s.step);
    b.CreateBr(head);
  }
  b.SetInsertPoint(done);
}

void Lowering::lower_loop_body(const BlockStmt &body, llvm::BasicBlock *next,
                               llvm::BasicBlock *exit) {
  loops_.push_back({next, exit});
  lower_block(body);
  loops_.pop_back();
}

// break, continue (check_types saw them inside a loop) and return (the probe's end). What follows
// a jump in its block is unreachable; it is lowered into a block of its own, which LLVM drops.
void Lowering::lower_jump(const JumpStmt &s) {
  if (s.jump == Jump::Return)
    b.CreateBr(probe_end_);
  else if (!loops_.empty())
    b.CreateBr(s.jump == Jump::Break ? loops_.back().exit : loops_.back().next);
  else
    return set_error("BUG: break or continue outside a loop");
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "after.jump", fn));
}

void Lowering::lower_stmt(const Stmt &s) {
  switch (s.kind) {
  case StmtKind::Expr:
    lower_expr(*s.as<ExprStmt>().expr);
    break;
  case StmtKind::MapAssign:
    lower_map_assign(s.as<MapAssignStmt>());
    break;
  case StmtKind::VarAssign:
    lower_var_assign(s.as<VarAssignStmt>());
    break;
  case StmtKind::If:
    lower_if(s.as<IfStmt>());
    break;
  case StmtKind::Block:
    lower_block(s.as<BlockStmt>());
    break;
  case StmtKind::While:
    lower_while(s.as<WhileStmt>());
    break;
  case StmtKind::Jump:
    lower_jump(s.as<JumpStmt>());
    break;
  }
}

void Lowering::lower_block(const BlockStmt &block) {
  for (const auto &s : block.stmts)
    lower_stmt(*s);
}

void Lowering::lower_probe_body(llvm::BasicBlock *skip) {
  probe_end_ = skip;
  if (probe->predicate) {
    auto *pass = llvm::BasicBlock::Create(ctx, "pred.pass", fn);
    b.CreateCondBr(truthy(lower_expr(*probe->predicate)), pass, skip);
    b.SetInsertPoint(pass);
  }
  if (probe->body)
    lower_block(*probe->body);
}

} // namespace gpubt::codegen
