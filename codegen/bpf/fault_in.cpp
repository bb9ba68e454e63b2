// Faults in the user pages str() will read, at the start of a sleepable uprobe program.
// bpf_probe_read_user_str cannot take a page fault, so bpftrace 0.17 reads "" from a string
// whose page was never touched (fresh .rodata, a new mmap). bpf_copy_from_user may sleep and
// fault the page in; the non-faulting read that follows then finds it.
#include "codegen/bpf/fault_in.h"

#include <linux/bpf.h>

#include "codegen/bpf/ir_helpers.h"
#include "codegen/bpf/lower_expr.h"

namespace gpubt::codegen::bpf {

using namespace frontend;

namespace {

// Expressions that can be evaluated early without side effects or map lookups.
bool is_pure(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Integer:
  case ExprKind::Builtin:
    return true;
  case ExprKind::Field:
    return e.as<FieldExpr>().base->kind == ExprKind::Builtin;
  case ExprKind::Cast:
    return is_pure(*e.as<CastExpr>().operand);
  case ExprKind::Binary: {
    const auto &b = e.as<BinaryExpr>();
    return b.op != BinaryOp::LogicalAnd && b.op != BinaryOp::LogicalOr && is_pure(*b.lhs) &&
           is_pure(*b.rhs);
  }
  default:
    return false;
  }
}

void collect(const Expr *e, std::vector<const Expr *> &out);
void collect_block(const BlockStmt *b, std::vector<const Expr *> &out);

void collect_all(const std::vector<ExprPtr> &es, std::vector<const Expr *> &out) {
  for (const auto &e : es)
    collect(e.get(), out);
}

void collect(const Expr *e, std::vector<const Expr *> &out) {
  if (!e)
    return;
  switch (e->kind) {
  case ExprKind::Call: {
    const auto &c = e->as<CallExpr>();
    if (c.id == FunctionId::Str && !c.args.empty() && is_pure(*c.args[0]))
      out.push_back(c.args[0].get());
    collect_all(c.args, out);
    break;
  }
  case ExprKind::Map:
    collect_all(e->as<MapExpr>().keys, out);
    break;
  case ExprKind::Binary:
    collect(e->as<BinaryExpr>().lhs.get(), out);
    collect(e->as<BinaryExpr>().rhs.get(), out);
    break;
  case ExprKind::Unary:
    collect(e->as<UnaryExpr>().operand.get(), out);
    break;
  case ExprKind::Ternary:
    collect(e->as<TernaryExpr>().cond.get(), out);
    collect(e->as<TernaryExpr>().then_expr.get(), out);
    collect(e->as<TernaryExpr>().else_expr.get(), out);
    break;
  case ExprKind::Cast:
    collect(e->as<CastExpr>().operand.get(), out);
    break;
  case ExprKind::Field:
    collect(e->as<FieldExpr>().base.get(), out);
    break;
  case ExprKind::Tuple:
    collect_all(e->as<TupleExpr>().elems, out);
    break;
  case ExprKind::Index:
    collect(e->as<IndexExpr>().base.get(), out);
    collect(e->as<IndexExpr>().index.get(), out);
    break;
  case ExprKind::Block:
    collect_block(e->as<BlockExpr>().block.get(), out);
    collect(e->as<BlockExpr>().value.get(), out);
    break;
  default:
    break;
  }
}

void collect_block(const BlockStmt *b, std::vector<const Expr *> &out) {
  if (!b)
    return;
  for (const auto &s : b->stmts) {
    switch (s->kind) {
    case StmtKind::Expr:
      collect(s->as<ExprStmt>().expr.get(), out);
      break;
    case StmtKind::MapAssign:
      collect(s->as<MapAssignStmt>().map.get(), out);
      collect(s->as<MapAssignStmt>().value.get(), out);
      break;
    case StmtKind::VarAssign:
      collect(s->as<VarAssignStmt>().value.get(), out);
      break;
    case StmtKind::If:
      collect(s->as<IfStmt>().cond.get(), out);
      collect_block(s->as<IfStmt>().then_block.get(), out);
      collect_block(s->as<IfStmt>().else_block.get(), out);
      break;
    case StmtKind::Block:
      collect_block(&s->as<BlockStmt>(), out);
      break;
    case StmtKind::While:
      collect(s->as<WhileStmt>().cond.get(), out);
      collect_block(s->as<WhileStmt>().body.get(), out);
      break;
    case StmtKind::Jump:
      break;
    }
  }
}

} // namespace

bool fault_in_user_strings(LowerCtx &c) {
  if (c.ap->provider != Provider::Uprobe && c.ap->provider != Provider::Uretprobe)
    return false;
  std::vector<const Expr *> ptrs;
  collect(c.probe->predicate.get(), ptrs);
  collect_block(c.probe->body.get(), ptrs);
  if (ptrs.empty())
    return false;
  llvm::Value *byte = stack_i64(c);
  for (const Expr *p : ptrs) {
    llvm::Value *addr = lower_expr(c, *p).v;
    // The first byte's page, and the page of the last byte str() may read (64 by default).
    for (uint64_t off : {uint64_t(0), uint64_t(63)}) {
      auto *src = c.b.CreateIntToPtr(c.b.CreateAdd(addr, c.b.getInt64(off)), c.b.getPtrTy());
      call_helper(c, BPF_FUNC_copy_from_user, {byte, c.b.getInt32(1), src});
    }
  }
  return true;
}

} // namespace gpubt::codegen::bpf
