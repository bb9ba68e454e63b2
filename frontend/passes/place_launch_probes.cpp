// The launch-level test: the predicate's shape, then every expression of the probe against the
// builtin and function tables (stdlib); any other gpu probe keeps it on the GPU.
#include "frontend/passes/place_launch_probes.h"


#include "frontend/ast_walk.h"
#include "stdlib/builtins.h"
#include "stdlib/functions.h"

namespace gpubt::frontend {
namespace {

struct Need {
  std::string why;
  SourceSpan where;
  explicit operator bool() const { return !why.empty(); }
};

// COND of `last_thread`, `last_thread && COND` or `COND && last_thread` (null: none); whether the
// predicate has that shape at all.
bool launch_predicate(const Expr *pred, const Expr *&cond) {
  cond = nullptr;
  if (!pred)
    return false;
  if (is_builtin(*pred, BuiltinId::LastThread))
    return true;
  if (pred->kind != ExprKind::Binary || pred->as<BinaryExpr>().op != BinaryOp::LogicalAnd)
    return false;
  const auto &b = pred->as<BinaryExpr>();
  if (is_builtin(*b.lhs, BuiltinId::LastThread))
    return cond = b.rhs.get(), true;
  if (is_builtin(*b.rhs, BuiltinId::LastThread))
    return cond = b.lhs.get(), true;
  return false;
}

// The first value of E (in source order) a launch's record cannot answer.
Need thread_value(const Expr &e) {
  if (e.kind == ExprKind::Builtin) {
    const auto &b = e.as<BuiltinExpr>();
    if (b.id && !stdlib::builtin_allowed(stdlib::builtin_info(*b.id), Provider::GpuLaunch))
      return {"reads " + b.name + ", a value of each thread", e.span};
  }
  if (e.kind == ExprKind::Call) {
    const auto &c = e.as<CallExpr>();
    if (c.id && !(stdlib::function_info(*c.id).contexts & stdlib::kHostContext))
      return {"calls " + c.name + "(), which runs on the GPU only", e.span};
  }
  return {};
}

template <class Walk> Need first_need(Walk &&walk) {
  Need need;
  walk([&](const Expr &e) {
    if (!need)
      need = thread_value(e);
  });
  return need;
}

Need placement_need(const Probe &p) {
  const Expr *cond = nullptr;
  if (!launch_predicate(p.predicate.get(), cond))
    return {"its predicate is not last_thread (alone or `last_thread && COND`)",
            p.predicate ? p.predicate->span : p.span};
  if (Need n = first_need([&](auto f) {
        if (cond)
          for_each_expr(*cond, f);
        if (p.body)
          for_each_expr(static_cast<const Stmt &>(*p.body), f);
      }))
    return n;
  return {};
}

} // namespace

std::vector<ProbePlacement> place_launch_probes(Program &program, const std::string &held) {
  // The one candidate (check_launch_state): a gpu:kretprobe with one attach point naming
  // last_thread. Every other gpu probe stays on the GPU, and keeps the candidate there too.
  Probe *candidate = nullptr;
  const Probe *other = nullptr; // a gpu probe that stays: the agent then uses the Sanitizer
  for (auto &probe : program.probes) {
    const auto &aps = probe->attach_points;
    bool last = first_use(*probe, BuiltinId::LastThread) != nullptr;
    if (aps.size() == 1 && aps[0].provider == Provider::GpuKretprobe && last && !candidate)
      candidate = probe.get();
    else if (!aps.empty() && (is_gpu(aps[0].provider) || aps[0].provider == Provider::GpuHang))
      other = other ? other : probe.get();
  }
  std::vector<ProbePlacement> out;
  for (auto &probe : program.probes) {
    for (auto &ap : probe->attach_points) {
      if (!is_gpu(ap.provider))
        continue;
      ProbePlacement p{ap.name(), false, false, "", {}};
      if (probe.get() == candidate) {
        // The launch timer (CUPTI) and the Sanitizer cannot share a process
        // (runtime/cuda_agent/launch_timer.h): all of a run's gpu probes move, or none.
        Need need = !held.empty() ? Need{held, ap.span}
                    : other ? Need{"another gpu probe stays on the GPU (" + other->attach_points[0].name() +
                                       "), and launches are timed only where none does",
                                   ap.span}
                            : placement_need(*probe);
        p.per_launch = !need;
        p.why = need.why, p.where = need.where;
        if (p.per_launch) {
          ap.provider = Provider::GpuLaunch;
          p.reads_launch_call = first_use(*probe, BuiltinId::LaunchCall) != nullptr;
        }
      } else {
        p.why = "it is not a gpu:kretprobe /last_thread/ probe";
        p.where = ap.span;
      }
      out.push_back(std::move(p));
    }
  }
  return out;
}

std::string placement_line(const ProbePlacement &p, const std::string &file) {
  if (p.per_launch)
    return p.probe + " runs in gpubt once per finished launch, from the CUDA agent's launch "
                     "records (launch-level values only: no exit probe in the kernel's threads)";
  std::string at = p.where.valid() ? file + ":" + std::to_string(p.where.line) + ":" +
                                         std::to_string(p.where.col) + ": "
                                   : "";
  return p.probe + " runs on the GPU in every thread: " + at + p.why;
}

} // namespace gpubt::frontend
