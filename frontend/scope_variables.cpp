// Block scopes for `let` and loop variables (scope_variables.h).
#include "frontend/scope_variables.h"

#include <map>
#include <vector>

#include "frontend/ast_walk.h"

namespace gpubt::frontend {
namespace {

struct Binding {
  int decl = 0; // 0: a probe-wide variable (assigned without let)
  SourceSpan span;
  VarAssignStmt::Decl how = VarAssignStmt::Decl::None;
};

class Scoper {
public:
  explicit Scoper(Diagnostics &diags) : diags_(diags) {}

  void probe(Probe &p) {
    scopes_.assign(1, {});
    if (p.predicate)
      exprs(*p.predicate);
    if (p.body)
      block(*p.body);
  }

private:
  Diagnostics &diags_;
  std::vector<std::map<std::string, Binding>> scopes_;
  int next_decl_ = 1;

  const Binding *find(const std::string &name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto b = it->find(name); b != it->end())
        return &b->second;
    return nullptr;
  }

  // The one thing this pass writes is each variable's decl. A block expression is a scope whose
  // value sees its declarations.
  void exprs(Expr &e) {
    if (e.kind == ExprKind::Variable) {
      auto &v = e.as<VariableExpr>();
      if (const Binding *b = find(v.name))
        v.decl = b->decl;
      return;
    }
    if (e.kind == ExprKind::Block) {
      auto &b = e.as<BlockExpr>();
      scopes_.emplace_back();
      for (auto &s : b.block->stmts)
        stmt(*s);
      if (b.value)
        exprs(*b.value);
      scopes_.pop_back();
      return;
    }
    // typeof(x) is no operand (never evaluated), but its variables are the scope's
    if (e.kind == ExprKind::Cast && e.as<CastExpr>().to.of)
      exprs(*e.as<CastExpr>().to.of);
    if (e.kind == ExprKind::SizeofType && e.as<SizeofTypeExpr>().of.of)
      exprs(*e.as<SizeofTypeExpr>().of.of);
    for_each_operand(e, [&](Expr &x) { exprs(x); });
  }

  void block(BlockStmt &b) {
    scopes_.emplace_back();
    for (auto &s : b.stmts)
      stmt(*s);
    scopes_.pop_back();
  }

  void declare(VarAssignStmt &a) {
    VariableExpr &v = *a.var;
    SourceSpan at = v.span; // `let $x`, as bpftrace underlines it
    if (a.declaration == VarAssignStmt::Decl::Let) {
      at = a.span;
      at.end_line = v.span.end_line;
      at.end_col = v.span.end_col;
    }
    declare(v, at, a.declaration);
  }
  void declare(VariableExpr &v, SourceSpan at, VarAssignStmt::Decl how) {
    if (const Binding *old = find(v.name)) {
      bool loop = how == VarAssignStmt::Decl::Loop;
      diags_.error(at, loop ? "Loop declaration shadows existing variable: " + v.name
                                : "Variable " + v.name +
                                      " was already declared. Variable shadowing is not allowed.");
      diags_.error(old->span, old->how == VarAssignStmt::Decl::None ? "This is the initial assignment."
                              : old->how == VarAssignStmt::Decl::Loop ? "This is the loop variable."
                                                                      : "This is the initial declaration.");
      return;
    }
    v.decl = next_decl_++;
    scopes_.back()[v.name] = {v.decl, at, how};
  }

  void var_assign(VarAssignStmt &a) {
    exprs(*a.value);
    if (a.declaration != VarAssignStmt::Decl::None)
      return declare(a);
    if (const Binding *b = find(a.var->name))
      a.var->decl = b->decl;
    else // probe-wide (decl 0); remembered here for the shadowing check of a later `let`
      scopes_.back()[a.var->name] = {0, a.var->span, VarAssignStmt::Decl::None};
  }

  void stmt(Stmt &s) {
    switch (s.kind) {
    case StmtKind::Expr:
      exprs(*s.as<ExprStmt>().expr);
      break;
    case StmtKind::MapAssign:
      exprs(*s.as<MapAssignStmt>().map);
      exprs(*s.as<MapAssignStmt>().value);
      break;
    case StmtKind::VarAssign:
      var_assign(s.as<VarAssignStmt>());
      break;
    case StmtKind::If: {
      auto &i = s.as<IfStmt>();
      exprs(*i.cond);
      block(*i.then_block);
      if (i.else_block)
        block(*i.else_block);
      break;
    }
    case StmtKind::Block:
      block(s.as<BlockStmt>());
      break;
    case StmtKind::While: {
      auto &w = s.as<WhileStmt>();
      if (w.each_map) { // $kv belongs to the loop's own scope
        exprs(*w.each_map);
        scopes_.emplace_back();
        declare(*w.each_var, w.each_var->span, VarAssignStmt::Decl::Loop);
        block(*w.body);
        scopes_.pop_back();
        break;
      }
      exprs(*w.cond);
      block(*w.body);
      if (w.step)
        stmt(*w.step);
      break;
    }
    case StmtKind::Jump:
      break;
    }
  }
};

} // namespace

void scope_variables(Program &program, Diagnostics &diags) {
  Scoper scoper(diags);
  for (auto &p : program.probes)
    scoper.probe(*p);
}

} // namespace gpubt::frontend
