// The layout pass: what both back ends read before either lowers a probe. The driver runs it
// once; the BPF lowering and the device lowering each start from it, in either order.
#pragma once
#include <map>
#include <string>

#include "codegen/layout/device_map_layout.h"
#include "codegen/layout/map_layout.h"
#include "frontend/ast.h"
#include "frontend/passes/semantic_info.h"
#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"

namespace gpubt::codegen::layout {

struct LayoutOptions {
  uint32_t map_max_entries = 4096; // a BPF map's entries; bpftrace's default
  // Entries per keyed gpu map, a power of two; 0: GPUBT_DEFAULT_MAP_CAPACITY, halved until the
  // map's storage fits GPUBT_DEFAULT_MAP_BYTES.
  uint32_t device_map_capacity = 0;
  // Slots a key the same for a whole launch spreads over, by SM (DeviceMap::key_spread), a power
  // of two; 1: one slot.
  uint32_t device_key_spread = 32;
};

struct ProgramLayout {
  // spec.maps: every map (user maps, then ring buffer, globals, scratch); spec.device.maps: the
  // gpu probes' maps. The lowerings add probes, formats and probe names to copies of it.
  abi::ProgramSpec spec;
  MapLayout maps;                                // indices into spec.maps
  std::map<std::string, DeviceMap> device_maps; // empty without gpu probes
};

bool is_gpu_probe(const frontend::Probe &probe);
bool has_gpu_probes(const frontend::Program &program);

Result<ProgramLayout> lay_out_program(const frontend::Program &program,
                                      const frontend::SemanticInfo &sema,
                                      const LayoutOptions &opts);

} // namespace gpubt::codegen::layout
