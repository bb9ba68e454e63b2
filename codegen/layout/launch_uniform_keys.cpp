// Keys the same for every thread of a launch (launch_uniform_keys.h).
#include "codegen/layout/launch_uniform_keys.h"

#include "codegen/layout/program_layout.h"
#include "frontend/ast_walk.h"
#include "stdlib/builtins.h"

namespace gpubt::codegen::layout {

using namespace frontend;

namespace {

bool uniform_builtin(const BuiltinExpr &b) {
  if (b.constant)
    return true; // an enum constant or a #define
  if (!b.id)
    return false;
  return stdlib::builtin_info(*b.id).variation == stdlib::Variation::PerLaunch;
}

bool uniform(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Integer:
  case ExprKind::String:
  case ExprKind::SizeofType:
    return true;
  case ExprKind::Builtin:
    return uniform_builtin(e.as<BuiltinExpr>());
  case ExprKind::Binary:
    return uniform(*e.as<BinaryExpr>().lhs) && uniform(*e.as<BinaryExpr>().rhs);
  case ExprKind::Unary: {
    const auto &u = e.as<UnaryExpr>();
    return u.op != UnaryOp::Deref && u.op != UnaryOp::AddressOf && !is_step(u.op) && uniform(*u.operand);
  }
  case ExprKind::Ternary: {
    const auto &t = e.as<TernaryExpr>();
    return uniform(*t.cond) && uniform(*t.then_expr) && uniform(*t.else_expr);
  }
  case ExprKind::Cast:
    return uniform(*e.as<CastExpr>().operand);
  case ExprKind::Tuple:
    for (const auto &el : e.as<TupleExpr>().elems)
      if (!uniform(*el))
        return false;
    return true;
  default: // variables, maps, calls, fields: not followed
    return false;
  }
}

} // namespace

bool keys_launch_uniform(const Program &program, const std::string &name) {
  bool all = true;
  for (const auto &p : program.probes)
    if (is_gpu_probe(*p))
      for_each_expr(*p, [&](const Expr &e) {
        if (e.kind != ExprKind::Map || e.as<MapExpr>().name != name)
          return;
        for (const auto &k : e.as<MapExpr>().keys)
          all = all && uniform(*k);
      });
  return all;
}

} // namespace gpubt::codegen::layout
