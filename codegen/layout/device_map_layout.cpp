// Where each map a gpu probe names lives on the device (device_map_layout.h).
#include "codegen/layout/device_map_layout.h"

#include <algorithm>

#include "codegen/layout/launch_uniform_keys.h"
#include "frontend/passes/map_sharing.h"
#include "runtime/abi/device_abi.h"

namespace gpubt::codegen::layout {

using namespace frontend;

namespace {

uint32_t round8(uint32_t n) { return (n + 7) / 8 * 8; }

abi::DeviceMapSpec layout_of(const MapInfo &info, int map_index, uint32_t capacity) {
  abi::DeviceMapSpec l;
  l.map_index = map_index;
  bool scalar = info.key.is_none();
  l.capacity = scalar ? 1 : capacity;
  l.key_size = scalar ? 0 : round8(info.key.size);
  const Type &v = info.value;
  switch (v.kind) {
  case TypeKind::Count:
  case TypeKind::Sum:
    l.value_size = 8;
    break;
  case TypeKind::Min:
  case TypeKind::Max:
  case TypeKind::Avg:
  case TypeKind::Stats:
    l.value_size = 16;
    break;
  case TypeKind::Hist:
  case TypeKind::Lhist:
    l.buckets =
        v.kind == TypeKind::Hist
            ? GPUBT_HIST_BUCKETS
            : 2 + uint32_t((v.lhist_max - v.lhist_min) / std::max<int64_t>(1, v.lhist_step));
    l.value_size = 8 * l.buckets;
    break;
  default:
    l.value_size = round8(std::max<uint32_t>(v.size, 8));
    break;
  }
  l.entry_size = 8 + l.key_size + l.value_size;
  if (!scalar && capacity == 0) {
    l.capacity = GPUBT_DEFAULT_MAP_CAPACITY;
    while (l.capacity > 1024 && l.storage_size() > GPUBT_DEFAULT_MAP_BYTES)
      l.capacity /= 2;
  }
  return l;
}

// A scalar aggregation every thread of a grid updates would put all its atomics on one address
// (a 2^26-thread vectorAdd counting warps: 2M atomics on one word, 15x the kernel's time on the
// H100). Each SM gets an entry of its own instead, a cache line apart, merged on the host like
// per-CPU values. Only for maps no gpu probe reads (a read would see one SM's part).
void stripe(DeviceMap &dm) {
  constexpr uint32_t kStripes = 256, kLine = 128; // SM ids (132 on an H100) fit 256
  dm.stripe_step = 1;
  while (dm.stripe_step * dm.layout.entry_size < kLine)
    dm.stripe_step *= 2;
  dm.layout.capacity = kStripes * dm.stripe_step;
  // Zero is where they start: the agent marks every entry READY, so an update is one atomic
  // (a READY store per warp cost 1.17x on the H100's vectorAdd).
  dm.layout.prefilled = dm.info->value.kind != TypeKind::Min && dm.info->value.kind != TypeKind::Max;
}

// A table copied from or to a BPF map (by the agent, before each traced launch or at each
// synchronization) holds at most the BPF map's entries: a power of two, and small, since it is
// copied whole each time.
uint32_t host_copy_capacity(const abi::MapSpec &host) {
  constexpr uint32_t kMax = 4096;
  uint32_t n = 1;
  while (n < host.max_entries && n < kMax)
    n *= 2;
  return n;
}

} // namespace

Result<std::map<std::string, DeviceMap>> add_device_maps(const Program &program,
                                                         const SemanticInfo &sema,
                                                         uint32_t capacity,
                                                         uint32_t key_spread,
                                                         abi::ProgramSpec &spec) {
  std::map<std::string, DeviceMap> out;
  for (const auto &[name, sides] : frontend::map_sharing(program, sema)) {
    if (!sides.gpu_use)
      continue;
    if (std::string why = frontend::map_sharing_error(name, sides); !why.empty())
      return make_error(why);
    auto info = sema.maps.find(name);
    int index = -1;
    for (size_t i = 0; i < spec.maps.size(); ++i)
      if (spec.maps[i].name == name)
        index = static_cast<int>(i);
    if (info == sema.maps.end() || index < 0)
      return make_error("BUG: map " + name + " has no map spec");
    if (out.size() == GPUBT_MAX_DEVICE_MAPS)
      return make_error("gpu probes use more than " + std::to_string(GPUBT_MAX_DEVICE_MAPS) +
                        " maps");
    DeviceMap dm;
    dm.slot = out.size();
    dm.info = &info->second;
    bool from_host = sides.sharing == frontend::MapSharing::FromHost;
    bool to_host = sides.sharing == frontend::MapSharing::ToHost;
    dm.layout = layout_of(info->second, index,
                          from_host || to_host ? host_copy_capacity(spec.maps[index])
                                               : capacity);
    dm.layout.from_host = from_host;
    dm.layout.to_host = to_host;
    dm.layout.host_named = sides.host_use != nullptr;
    dm.layout.host_reads = sides.sharing == frontend::MapSharing::GpuOnly &&
                           info->second.value.is_aggregate() && sides.host_other != nullptr;
    bool private_aggregate = info->second.value.is_aggregate() && !sides.gpu_read;
    if (dm.layout.key_size == 0 && private_aggregate)
      stripe(dm);
    // 2M warps of one launch on one slot cost a vector add 3.9x on the H100 (its atomics are
    // serialized at one address); spread over N slots, each takes 1/N of them.
    if (dm.layout.key_size && private_aggregate && !from_host && !to_host && key_spread > 1 &&
        dm.layout.capacity >= 16 * key_spread && keys_launch_uniform(program, name))
      dm.key_spread = key_spread;
    spec.device.maps.push_back(dm.layout);
    out[name] = dm;
  }
  return out;
}


} // namespace gpubt::codegen::layout
