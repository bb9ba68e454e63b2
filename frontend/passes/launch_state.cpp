// One walk over the gpu probes' expressions, counting attach points whose probe names the
// builtin; the error points at the first use that makes the count pass one.
#include "frontend/passes/launch_state.h"

#include "frontend/ast_walk.h"

namespace gpubt::frontend {

void check_launch_state(const Program &program, Diagnostics &diags) {
  size_t counting = 0;
  for (const auto &probe : program.probes) {
    if (probe->attach_points.empty() || !is_gpu(probe->attach_points[0].provider))
      continue;
    const Expr *use = nullptr;
    for_each_expr(*probe, [&](const Expr &e) {
      if (!use && is_builtin(e, BuiltinId::LastThread))
        use = &e;
    });
    if (!use)
      continue;
    counting += probe->attach_points.size();
    if (counting > 1)
      return diags.error(use->span, "last_thread can be used in one gpu probe (with one attach "
                                    "point) only: each would count the launch's threads again");
  }
}

} // namespace gpubt::frontend
