// The device maps: every map a gpu probe names, with its slot in gpubt_device_ctx::maps and its
// layout on the device (runtime/abi/device_abi.h). Shared maps follow
// frontend/passes/map_sharing.h; one it refuses is refused here too.
#pragma once
#include <map>
#include <string>

#include "frontend/ast.h"
#include "frontend/passes/semantic_info.h"
#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"

namespace gpubt::codegen::layout {

// A map as the device sees it: slot in gpubt_device_ctx::maps, layout, types.
struct DeviceMap {
  uint32_t slot = 0;
  uint32_t stripe_step = 0; // striped scalar aggregation: an SM's entry is at smid * stripe_step
  // A keyed aggregation updated only under launch-uniform keys (launch_uniform_keys.h): a key's
  // slot search starts at one of key_spread places, chosen by SM, so a key may hold up to
  // key_spread slots (merged on the host, as a key of two GPUs is).
  uint32_t key_spread = 0;
  abi::DeviceMapSpec layout;
  const frontend::MapInfo *info = nullptr;
};

// Appends the layouts to spec.device.maps; spec.maps must list every map (add_map_specs).
// CAPACITY: entries per keyed map, a power of two; 0: GPUBT_DEFAULT_MAP_CAPACITY, halved until
// the map's storage fits GPUBT_DEFAULT_MAP_BYTES. KEY_SPREAD: DeviceMap::key_spread where it
// applies (a power of two; 1: none).
Result<std::map<std::string, DeviceMap>> add_device_maps(const frontend::Program &program,
                                                         const frontend::SemanticInfo &sema,
                                                         uint32_t capacity, uint32_t key_spread,
                                                         abi::ProgramSpec &spec);

} // namespace gpubt::codegen::layout
