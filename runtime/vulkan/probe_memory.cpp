// The Vulkan layer's probe memory (see probe_memory.h).
#include "runtime/vulkan/probe_memory.h"

#include <cstring>
#include <unistd.h>

#include "runtime/abi/device_map_table.h"
#include "runtime/abi/device_abi.h"
#include "runtime/abi/kernel_name.h"
#include "runtime/abi/ring_records.h"

namespace gpubt::runtime::vulkan {

namespace {
constexpr uint64_t kAlign = 256;
uint64_t align_up(uint64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
} // namespace

uint64_t ProbeMemoryLayout::ctx_offset(uint32_t index) {
  return index * align_up(sizeof(gpubt_device_ctx));
}

ProbeMemoryLayout ProbeMemoryLayout::of(const abi::AgentConfig &config) {
  ProbeMemoryLayout l;
  uint64_t at = ctx_offset(kMaxEntryContexts);
  for (const auto &m : config.device.maps) {
    l.map_offsets.push_back(at);
    at = align_up(at + m.storage_size());
  }
  l.ring_offset = at;
  at = align_up(at + sizeof(gpubt_device_ring) + config.device.ring_capacity);
  if (config.device.features & abi::DeviceBlockState) {
    l.block_slots_offset = at;
    at += uint64_t(GPUBT_BLOCK_SLOTS) * 8;
  }
  l.scratch_offset = align_up(at);
  l.size = l.scratch_offset + kAlign;
  return l;
}

void init_probe_memory(const abi::AgentConfig &config, const ProbeMemoryLayout &layout,
                       uint8_t *host) {
  for (size_t j = 0; j < config.device.maps.size(); ++j) {
    const auto &spec = config.device.maps[j];
    uint8_t *map = host + layout.map_offsets[j];
    abi::init_device_map_table(spec, map);
  }
  gpubt_device_ring ring{};
  ring.capacity = config.device.ring_capacity;
  std::memcpy(host + layout.ring_offset, &ring, sizeof ring);
}

void write_entry_context(const abi::AgentConfig &config, const ProbeMemoryLayout &layout,
                         uint8_t *host, uint64_t address, uint32_t index,
                         const std::string &kernel, uint64_t probe_mask,
                         const DeviceClock &clock, std::optional<uint32_t> kernel_index) {
  gpubt_device_ctx ctx{};
  ctx.abi_version = GPUBT_DEVICE_ABI_VERSION;
  ctx.pid = uint32_t(getpid());
  ctx.ring = address + layout.ring_offset;
  ctx.kernel_index = kernel_index.value_or(index);
  ctx.num_maps = uint32_t(config.device.maps.size());
  std::strncpy(ctx.kernel_name, abi::device_kernel_name(kernel).c_str(), GPUBT_KERNEL_NAME_SIZE - 1);
  for (size_t j = 0; j < config.device.maps.size() && j < GPUBT_MAX_DEVICE_MAPS; ++j)
    ctx.maps[j] = address + layout.map_offsets[j];
  ctx.probe_mask = probe_mask;
  ctx.launch_start = UINT64_MAX;
  ctx.clock_offset_ns = clock.offset_ns;
  ctx.clock_rate = clock.rate_q32;
  ctx.clock_base = clock.base;
  ctx.clock_mask = clock.mask;
  if (layout.block_slots_offset)
    ctx.block_slots = address + layout.block_slots_offset;
  std::memcpy(host + ProbeMemoryLayout::ctx_offset(index), &ctx, sizeof ctx);
}

void write_entry_clock(uint8_t *host, uint32_t index, const DeviceClock &clock) {
  uint8_t *ctx = host + ProbeMemoryLayout::ctx_offset(index);
  // A probe running meanwhile may read the new base with the old offset: a rebase keeps the
  // model (rebased_clock), so that is off by the drift over the move only.
  std::memcpy(ctx + offsetof(gpubt_device_ctx, clock_base), &clock.base, 8);
  std::memcpy(ctx + offsetof(gpubt_device_ctx, clock_offset_ns), &clock.offset_ns, 8);
  std::memcpy(ctx + offsetof(gpubt_device_ctx, clock_mask), &clock.mask, 8);
}

abi::DeviceImage read_probe_memory(const abi::AgentConfig &config,
                                   const ProbeMemoryLayout &layout, const uint8_t *host) {
  abi::DeviceImage image;
  for (size_t j = 0; j < config.device.maps.size(); ++j) {
    const uint8_t *map = host + layout.map_offsets[j];
    image.maps.emplace_back(map, map + config.device.maps[j].storage_size());
  }
  gpubt_device_ring ring;
  std::memcpy(&ring, host + layout.ring_offset, sizeof ring);
  image.ring_drops = ring.drops;
  abi::take_records(host + layout.ring_offset, ring.capacity, image.ring_records);
  return image;
}

} // namespace gpubt::runtime::vulkan
