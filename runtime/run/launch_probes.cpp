// Launch-level probes fired per finished launch (see launch_probes.h).
#include "runtime/run/launch_probes.h"

#include "runtime/abi/kernel_name.h"
#include "runtime/ptx/kernel_match.h"

namespace gpubt::runtime {

LaunchProbes::LaunchProbes(const abi::ProgramSpec &spec) {
  for (size_t i = 0; i < spec.probes.size(); ++i)
    if (spec.probes[i].kind == abi::AttachKind::LaunchEnd)
      probes_.push_back({i, spec.probes[i].func});
}

Status LaunchProbes::take_from(std::vector<uint8_t> &records, const Fire &fire,
                               const Each &each) {
  return abi::take_finished_launches(records, [&](const abi::FinishedLaunches &r) {
    any_record_ = true;
    lost_ += r.lost;
    for (const auto &l : r.launches) {
      if (each)
        each(r.pid, l);
      ptx::KernelNames names = ptx::kernel_names(l.kernel);
      // The name `kernel` has in gpu probes: maps keyed by it agree with the device's.
      std::string name = abi::device_kernel_name(names.base);
      for (const auto &p : probes_) {
        if (!ptx::kernel_matches(p.pattern, names))
          continue;
        abi::LaunchCtx ctx;
        abi::set_launch_fields(ctx, name, r.pid, l);
        ctx.start_ns = l.start_ns;
        ctx.end_ns = l.end_ns;
        ctx.call_ns = l.call_ns;
        fire(p.index, ctx);
      }
    }
  });
}

} // namespace gpubt::runtime
