// One walk over the gpu probes' expressions, counting attach points whose probe names the
// builtin; the error points at the first use that makes the count pass one.
#include "frontend/passes/launch_state.h"

#include "frontend/ast_walk.h"

namespace gpubt::frontend {

namespace {

void check_block_probes(const Program &program, Diagnostics &diags) {
  const AttachPoint *first[2] = {nullptr, nullptr}; // block_begin, block_end
  for (const auto &probe : program.probes)
    for (const auto &ap : probe->attach_points) {
      if (!is_gpu_block(ap.provider))
        continue;
      const AttachPoint *&seen = first[ap.provider == Provider::GpuBlockEnd];
      const AttachPoint *other = first[ap.provider != Provider::GpuBlockEnd];
      if (seen)
        return diags.error(ap.span, ap.name() + ": a script may have one " +
                                        ap.name().substr(0, ap.name().rfind(':')) +
                                        " probe (with one attach point): each would claim the "
                                        "block's state again");
      if (other && other->func != ap.func)
        return diags.error(ap.span, "gpu:block_begin and gpu:block_end must name one kernel "
                                    "pattern, here '" + other->func +
                                        "': a kernel that both patterns match would count its "
                                        "blocks twice");
      seen = &ap;
    }
}

} // namespace

void check_launch_state(const Program &program, Diagnostics &diags) {
  size_t counting = 0;
  for (const auto &probe : program.probes) {
    if (probe->attach_points.empty() || !is_gpu(probe->attach_points[0].provider))
      continue;
    const Expr *use = first_use(*probe, BuiltinId::LastThread);
    if (!use)
      continue;
    counting += probe->attach_points.size();
    if (counting > 1)
      return diags.error(use->span, "last_thread can be used in one gpu probe (with one attach "
                                    "point) only: each would count the launch's threads again");
  }
  check_block_probes(program, diags);
}

} // namespace gpubt::frontend
