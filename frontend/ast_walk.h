// Visits every expression of a probe (predicate, then body), each before its operands: the one
// walker for passes that look for something (a builtin, a call), and (walk_exprs) for a pass that
// replaces expressions.
#pragma once
#include "frontend/ast.h"

namespace gpubt::frontend {

// Calls F on the owning pointer of each expression operand of E (a map's keys, a call's
// arguments, ...), not deeper: F may replace the operand. A block expression's statements are
// not operands: a pass walks them as statements.
template <class F> void for_each_operand_slot(Expr &e, F &&f) {
  switch (e.kind) {
  case ExprKind::Map:
    for (auto &k : e.as<MapExpr>().keys)
      f(k);
    break;
  case ExprKind::Call:
    for (auto &a : e.as<CallExpr>().args)
      f(a);
    break;
  case ExprKind::Binary:
    f(e.as<BinaryExpr>().lhs);
    f(e.as<BinaryExpr>().rhs);
    break;
  case ExprKind::Unary:
    f(e.as<UnaryExpr>().operand);
    break;
  case ExprKind::Ternary:
    f(e.as<TernaryExpr>().cond);
    f(e.as<TernaryExpr>().then_expr);
    f(e.as<TernaryExpr>().else_expr);
    break;
  case ExprKind::Cast:
    f(e.as<CastExpr>().operand);
    break;
  case ExprKind::Field:
    f(e.as<FieldExpr>().base);
    break;
  case ExprKind::Tuple:
    for (auto &el : e.as<TupleExpr>().elems)
      f(el);
    break;
  case ExprKind::Index:
    f(e.as<IndexExpr>().base);
    f(e.as<IndexExpr>().index);
    break;
  case ExprKind::Block:
    if (e.as<BlockExpr>().value)
      f(e.as<BlockExpr>().value);
    break;
  default:
    break;
  }
}

// Calls F on each expression operand of E, mutable, not deeper: the walker for passes that
// change the tree and keep their own state on the way down.
template <class F> void for_each_operand(Expr &e, F &&f) {
  for_each_operand_slot(e, [&](ExprPtr &p) { f(*p); });
}

// The one expression walk: F(expr, slot) on each expression, each before its operands (a block
// expression: its statements, then its value). SLOT owns the expression and F may replace it
// (the walk then goes into the replacement); null where the owner is no ExprPtr (an
// assignment's map, a for loop's map and variable).
template <class F> void walk_exprs(Expr &e, ExprPtr *slot, F &f);
template <class F> void walk_exprs(Stmt &s, F &f);

template <class F> void walk_exprs(Expr &e, ExprPtr *slot, F &f) {
  f(e, slot);
  Expr &now = slot ? **slot : e;
  if (now.kind == ExprKind::Block)
    for (auto &st : now.as<BlockExpr>().block->stmts)
      walk_exprs(*st, f);
  for_each_operand_slot(now, [&](ExprPtr &p) { walk_exprs(*p, &p, f); });
}

template <class F> void walk_exprs(Stmt &s, F &f) {
  auto slot = [&](ExprPtr &p) { walk_exprs(*p, &p, f); };
  switch (s.kind) {
  case StmtKind::Expr:
    slot(s.as<ExprStmt>().expr);
    break;
  case StmtKind::MapAssign:
    walk_exprs(*s.as<MapAssignStmt>().map, nullptr, f);
    slot(s.as<MapAssignStmt>().value);
    break;
  case StmtKind::VarAssign:
    slot(s.as<VarAssignStmt>().value);
    break;
  case StmtKind::If:
    slot(s.as<IfStmt>().cond);
    walk_exprs(*s.as<IfStmt>().then_block, f);
    if (s.as<IfStmt>().else_block)
      walk_exprs(*s.as<IfStmt>().else_block, f);
    break;
  case StmtKind::Block:
    for (auto &st : s.as<BlockStmt>().stmts)
      walk_exprs(*st, f);
    break;
  case StmtKind::While:
    if (s.as<WhileStmt>().each_map) {
      walk_exprs(*s.as<WhileStmt>().each_map, nullptr, f);
      walk_exprs(*s.as<WhileStmt>().each_var, nullptr, f);
    } else {
      slot(s.as<WhileStmt>().cond);
    }
    walk_exprs(*s.as<WhileStmt>().body, f);
    if (s.as<WhileStmt>().step)
      walk_exprs(*s.as<WhileStmt>().step, f);
    break;
  case StmtKind::Jump:
    break;
  }
}

// Every expression of E or S, each before its operands; F only looks (walk_exprs gives it
// const expressions).
template <class F> void for_each_expr(const Expr &e, F &&f) {
  auto look = [&](Expr &x, ExprPtr *) { f(static_cast<const Expr &>(x)); };
  walk_exprs(const_cast<Expr &>(e), nullptr, look);
}

template <class F> void for_each_expr(const Stmt &s, F &&f) {
  auto look = [&](Expr &x, ExprPtr *) { f(static_cast<const Expr &>(x)); };
  walk_exprs(const_cast<Stmt &>(s), look);
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

// A probe's expressions, predicate first (F may replace the predicate itself), then its body.
template <class F> void walk_exprs(Probe &probe, F &f) {
  if (probe.predicate)
    walk_exprs(*probe.predicate, &probe.predicate, f);
  if (probe.body)
    walk_exprs(static_cast<Stmt &>(*probe.body), f);
}

template <class F> void for_each_expr(const Probe &probe, F &&f) {
  auto look = [&](Expr &x, ExprPtr *) { f(static_cast<const Expr &>(x)); };
  walk_exprs(const_cast<Probe &>(probe), look);
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
