// Which gpu:kretprobes may run at the kernel's entry instead (probe_point.h).
#include "codegen/device/probe_point.h"

#include "frontend/ast_walk.h"
#include "stdlib/builtins.h"
#include "stdlib/functions.h"

namespace gpubt::codegen::device {

using frontend::ExprKind;
using frontend::StmtKind;

namespace {

bool is_aggregation(const frontend::Expr &e) {
  if (e.kind != ExprKind::Call)
    return false;
  const auto &id = e.as<frontend::CallExpr>().id;
  return id && stdlib::function_info(*id).kind == stdlib::FunctionKind::Aggregation;
}

} // namespace

bool same_result_at_entry(const frontend::Probe &probe) {
  bool ok = true;
  size_t map_targets = 0, map_uses = 0;
  if (probe.body)
    frontend::for_each_stmt(*probe.body, [&](const frontend::Stmt &s) {
      if (s.kind == StmtKind::Expr)
        ok = false; // printf() and other statements: where they run is what they show
      if (s.kind == StmtKind::MapAssign) {
        const auto &assign = s.as<frontend::MapAssignStmt>();
        ok = ok && !assign.compound && is_aggregation(*assign.value);
        ++map_targets;
      }
    });
  frontend::for_each_expr(probe, [&](const frontend::Expr &e) {
    if (e.kind == ExprKind::Map)
      ++map_uses;
    if (e.kind == ExprKind::Builtin) {
      const auto &id = e.as<frontend::BuiltinExpr>().id;
      ok = ok && id && stdlib::builtin_info(*id).variation != stdlib::Variation::OverTime;
    }
    if (e.kind == ExprKind::Call && !is_aggregation(e))
      ok = false;
  });
  return ok && map_uses == map_targets; // any other map use reads a map
}

} // namespace gpubt::codegen::device
