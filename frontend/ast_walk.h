// Visits every expression of a probe (predicate, then body), each before its operands: the one
// walker for passes that only look for something (a builtin, a call) and change nothing.
#pragma once
#include "frontend/ast.h"

namespace gpubt::frontend {

// Calls F on each expression operand of E (a map's keys, a call's arguments, ...), mutable, not
// deeper: the walker for passes that change the tree and keep their own state on the way down.
// A block expression's statements are not operands: such a pass walks them as statements.
template <class F> void for_each_operand(Expr &e, F &&f) {
  switch (e.kind) {
  case ExprKind::Map:
    for (auto &k : e.as<MapExpr>().keys)
      f(*k);
    break;
  case ExprKind::Call:
    for (auto &a : e.as<CallExpr>().args)
      f(*a);
    break;
  case ExprKind::Binary:
    f(*e.as<BinaryExpr>().lhs);
    f(*e.as<BinaryExpr>().rhs);
    break;
  case ExprKind::Unary:
    f(*e.as<UnaryExpr>().operand);
    break;
  case ExprKind::Ternary:
    f(*e.as<TernaryExpr>().cond);
    f(*e.as<TernaryExpr>().then_expr);
    f(*e.as<TernaryExpr>().else_expr);
    break;
  case ExprKind::Cast:
    f(*e.as<CastExpr>().operand);
    break;
  case ExprKind::Field:
    f(*e.as<FieldExpr>().base);
    break;
  case ExprKind::Tuple:
    for (auto &el : e.as<TupleExpr>().elems)
      f(*el);
    break;
  case ExprKind::Index:
    f(*e.as<IndexExpr>().base);
    f(*e.as<IndexExpr>().index);
    break;
  case ExprKind::Block:
    if (e.as<BlockExpr>().value)
      f(*e.as<BlockExpr>().value);
    break;
  default:
    break;
  }
}

template <class F> void for_each_expr(const Expr &e, F &&f);
template <class F> void for_each_expr(const Stmt &s, F &&f);

template <class F> void for_each_expr(const Expr &e, F &&f) {
  f(e);
  if (e.kind == ExprKind::Block) // its statements, then (an operand) its value
    for (const auto &st : e.as<BlockExpr>().block->stmts)
      for_each_expr(*st, f);
  // for_each_operand only reads here: the walk hands F const expressions
  for_each_operand(const_cast<Expr &>(e), [&](const Expr &x) { for_each_expr(x, f); });
}

template <class F> void for_each_expr(const Stmt &s, F &&f) {
  switch (s.kind) {
  case StmtKind::Expr:
    for_each_expr(*s.as<ExprStmt>().expr, f);
    break;
  case StmtKind::MapAssign:
    for_each_expr(*s.as<MapAssignStmt>().map, f);
    for_each_expr(*s.as<MapAssignStmt>().value, f);
    break;
  case StmtKind::VarAssign:
    for_each_expr(*s.as<VarAssignStmt>().value, f);
    break;
  case StmtKind::If:
    for_each_expr(*s.as<IfStmt>().cond, f);
    for_each_expr(*s.as<IfStmt>().then_block, f);
    if (s.as<IfStmt>().else_block)
      for_each_expr(*s.as<IfStmt>().else_block, f);
    break;
  case StmtKind::Block:
    for (const auto &st : s.as<BlockStmt>().stmts)
      for_each_expr(*st, f);
    break;
  case StmtKind::While:
    if (s.as<WhileStmt>().each_map) {
      for_each_expr(*s.as<WhileStmt>().each_map, f);
      for_each_expr(*s.as<WhileStmt>().each_var, f);
    } else {
      for_each_expr(*s.as<WhileStmt>().cond, f);
    }
    for_each_expr(*s.as<WhileStmt>().body, f);
    if (s.as<WhileStmt>().step)
      for_each_expr(*s.as<WhileStmt>().step, f);
    break;
  case StmtKind::Jump:
    break;
  }
}

// Visits every statement (blocks' and ifs' own statements included), each before its children.
template <class F> void for_each_stmt(const Stmt &s, F &&f) {
  f(s);
  if (s.kind == StmtKind::If) {
    for_each_stmt(*s.as<IfStmt>().then_block, f);
    if (s.as<IfStmt>().else_block)
      for_each_stmt(*s.as<IfStmt>().else_block, f);
  } else if (s.kind == StmtKind::Block) {
    for (const auto &st : s.as<BlockStmt>().stmts)
      for_each_stmt(*st, f);
  } else if (s.kind == StmtKind::While) {
    for_each_stmt(*s.as<WhileStmt>().body, f);
    if (s.as<WhileStmt>().step)
      for_each_stmt(*s.as<WhileStmt>().step, f);
  }
}

template <class F> void for_each_expr(const Probe &probe, F &&f) {
  if (probe.predicate)
    for_each_expr(*probe.predicate, f);
  if (probe.body)
    for_each_expr(static_cast<const Stmt &>(*probe.body), f);
}

// The probe's first read of builtin ID (predicate first, then the body in order), or null.
inline const Expr *first_use(const Probe &probe, BuiltinId id) {
  const Expr *use = nullptr;
  for_each_expr(probe, [&](const Expr &e) {
    if (!use && is_builtin(e, id))
      use = &e;
  });
  return use;
}

} // namespace gpubt::frontend
