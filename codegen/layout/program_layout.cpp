// The layout pass (program_layout.h): host map specs, then the device maps that index them.
#include "codegen/layout/program_layout.h"

namespace gpubt::codegen::layout {

bool is_gpu_probe(const frontend::Probe &p) {
  return !p.attach_points.empty() && frontend::is_gpu(p.attach_points[0].provider);
}

bool has_gpu_probes(const frontend::Program &program) {
  for (const auto &p : program.probes)
    if (is_gpu_probe(*p))
      return true;
  return false;
}

Result<ProgramLayout> lay_out_program(const frontend::Program &program,
                                      const frontend::SemanticInfo &sema,
                                      const LayoutOptions &opts) {
  ProgramLayout out;
  out.maps = add_map_specs(sema, opts.map_max_entries, out.spec);
  if (!has_gpu_probes(program))
    return out;
  uint32_t capacity = opts.device_map_capacity;
  if (capacity & (capacity - 1))
    return make_error("device map and ring capacities must be powers of two");
  auto device_maps = add_device_maps(program, sema, capacity, opts.device_key_spread, out.spec);
  if (!device_maps)
    return make_error(device_maps.error());
  out.device_maps = std::move(*device_maps);
  return out;
}

} // namespace gpubt::codegen::layout
