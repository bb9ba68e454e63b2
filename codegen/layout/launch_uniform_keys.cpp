// Keys the same for every thread of a launch (launch_uniform_keys.h).
#include "codegen/layout/launch_uniform_keys.h"

#include <algorithm>

#include "codegen/layout/program_layout.h"
#include "frontend/ast_walk.h"
#include "stdlib/builtins.h"

namespace gpubt::codegen::layout {

using namespace frontend;

namespace {

// Where uniform() lists the per-launch builtins a kernel's ctx does not fix (null: not asked).
using LaunchValues = std::vector<const BuiltinExpr *>;

bool fixed_by_ctx(BuiltinId id) {
  return id == BuiltinId::Kernel || id == BuiltinId::Pid || id == BuiltinId::Probe;
}

bool uniform_builtin(const BuiltinExpr &b, LaunchValues *values) {
  if (b.constant)
    return true; // an enum constant or a #define
  if (!b.id || stdlib::builtin_info(*b.id).variation != stdlib::Variation::PerLaunch)
    return false;
  if (values && !fixed_by_ctx(*b.id) &&
      std::none_of(values->begin(), values->end(), [&](auto *v) { return v->id == b.id; }))
    values->push_back(&b);
  return true;
}

bool uniform(const Expr &e, LaunchValues *values) {
  auto all = [&](std::initializer_list<const Expr *> parts) {
    return std::all_of(parts.begin(), parts.end(), [&](auto *p) { return uniform(*p, values); });
  };
  switch (e.kind) {
  case ExprKind::Integer:
  case ExprKind::String:
  case ExprKind::SizeofType:
    return true;
  case ExprKind::Builtin:
    return uniform_builtin(e.as<BuiltinExpr>(), values);
  case ExprKind::Binary:
    return all({e.as<BinaryExpr>().lhs.get(), e.as<BinaryExpr>().rhs.get()});
  case ExprKind::Unary: {
    const auto &u = e.as<UnaryExpr>();
    return u.op != UnaryOp::Deref && u.op != UnaryOp::AddressOf && !is_step(u.op) &&
           all({u.operand.get()});
  }
  case ExprKind::Ternary: {
    const auto &t = e.as<TernaryExpr>();
    return all({t.cond.get(), t.then_expr.get(), t.else_expr.get()});
  }
  case ExprKind::Cast:
    return all({e.as<CastExpr>().operand.get()});
  case ExprKind::Tuple:
    for (const auto &el : e.as<TupleExpr>().elems)
      if (!uniform(*el, values))
        return false;
    return true;
  default: // variables, maps, calls, fields: not followed
    return false;
  }
}

} // namespace

bool launch_uniform(const Expr &e) { return uniform(e, nullptr); }

std::optional<LaunchValues> launch_values_in_key(const MapExpr &m) {
  LaunchValues values;
  for (const auto &k : m.keys)
    if (!uniform(*k, &values))
      return std::nullopt;
  return values;
}

bool keys_launch_uniform(const Program &program, const std::string &name) {
  bool all = true;
  for (const auto &p : program.probes)
    if (is_gpu_probe(*p))
      for_each_expr(*p, [&](const Expr &e) {
        if (e.kind == ExprKind::Map && e.as<MapExpr>().name == name)
          all = all && launch_values_in_key(e.as<MapExpr>()).has_value();
      });
  return all;
}

} // namespace gpubt::codegen::layout
