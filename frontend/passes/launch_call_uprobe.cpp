// launch_call on the GPU: a read of a host map a hidden uprobe on libcuda's launch calls writes.
#include "frontend/passes/launch_call_uprobe.h"

#include "frontend/ast_walk.h"

namespace gpubt::frontend {
namespace {

ExprPtr launch_call_map(const Expr &use) {
  auto m = std::make_unique<MapExpr>();
  m->span = use.span;
  m->name = kLaunchCallMap;
  m->type = use.type;
  return m;
}

// uprobe:cuda:cuLaunchKernel* { @.launch_call = nsecs; }, at the first use's span (where a
// lowering error would point).
std::unique_ptr<Probe> launch_call_probe(const SourceSpan &at) {
  auto probe = std::make_unique<Probe>();
  probe->span = at;
  probe->hidden = true;
  AttachPoint ap;
  ap.span = at;
  ap.raw = kLaunchCallProbe;
  ap.provider = Provider::Uprobe;
  ap.target = "cuda";
  ap.func = "cuLaunchKernel*";
  probe->attach_points.push_back(std::move(ap));
  auto now = std::make_unique<BuiltinExpr>();
  now->span = at;
  now->name = "nsecs";
  now->id = BuiltinId::Nsecs;
  now->type = Type::integer(8, false);
  auto assign = std::make_unique<MapAssignStmt>();
  assign->span = at;
  assign->map.reset(static_cast<MapExpr *>(launch_call_map(*now).release()));
  assign->value = std::move(now);
  probe->body = std::make_unique<BlockStmt>();
  probe->body->span = at;
  probe->body->stmts.push_back(std::move(assign));
  return probe;
}

} // namespace

bool lower_launch_call_on_device(Program &program, SemanticInfo &sema) {
  bool found = false;
  SourceSpan at; // the first use
  auto rewrite = [&](Expr &e, ExprPtr *slot) {
    if (!slot || !is_builtin(e, BuiltinId::LaunchCall))
      return;
    at = found ? at : e.span;
    found = true;
    *slot = launch_call_map(e);
  };
  for (auto &probe : program.probes) {
    if (probe->attach_points.empty() || !is_gpu(probe->attach_points[0].provider))
      continue; // a host probe, or one place_launch_probes moved: it reads the launch's record
    walk_exprs(*probe, rewrite);
  }
  if (!found)
    return false;
  MapInfo info;
  info.name = kLaunchCallMap;
  info.value = Type::integer(8, false);
  info.first_use = at;
  info.internal = true;
  sema.maps[kLaunchCallMap] = info;
  program.probes.push_back(launch_call_probe(at));
  return true;
}

} // namespace gpubt::frontend
