// The probes' device memory in a Vulkan device, as one host-visible buffer the shaders reach by
// its device address: a gpubt_device_ctx per instrumented entry point, the device maps and the
// printf ring (layouts of runtime/abi/device_abi.h). Pure layout and bytes: no Vulkan calls.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/abi/agent_protocol.h"

namespace gpubt::runtime::vulkan {

// Instrumented entry points alive at once on a device (a destroyed one's slot is used again:
// entry_slots.h); a context is under 2 KiB (1.75 with its alignment), so 4096 of them take 7 MiB.
inline constexpr uint32_t kMaxEntryContexts = 4096;

struct ProbeMemoryLayout {
  std::vector<uint64_t> map_offsets; // per DeviceMapSpec
  uint64_t ring_offset = 0;
  // gpu:block_begin / gpu:block_end (abi::DeviceBlockState): GPUBT_BLOCK_SLOTS words every
  // entry point's probes share (the layer orders such dispatches); 0: none.
  uint64_t block_slots_offset = 0;
  uint64_t scratch_offset = 0; // 8 bytes the layer's own shaders write (device_clock.h)
  uint64_t size = 0;
  static ProbeMemoryLayout of(const abi::AgentConfig &config);
  static uint64_t ctx_offset(uint32_t index);
};

// The Device-scope shader clock on CLOCK_MONOTONIC, as gpubt_device_ctx's clock fields hold it:
// nsecs = t + offset_ns + ((int64_t)(t - base) * rate_q32 >> 32).
struct DeviceClock {
  int64_t offset_ns = 0;
  int64_t rate_q32 = 0;
  uint64_t base = 0;
  uint64_t mask = 0; // gpubt_device_ctx::clock_mask: 0, or the bits of a narrower clock
};

// Zeroed memory HOST (LAYOUT.size bytes at device address ADDRESS) made ready for the probes:
// map headers, prefilled entries, ring header.
void init_probe_memory(const abi::AgentConfig &config, const ProbeMemoryLayout &layout,
                       uint8_t *host);

// Context INDEX for entry point KERNEL, running the probes in PROBE_MASK; KERNEL_INDEX (the
// timeline's row) is INDEX unless given (a slot used again gets a new one).
void write_entry_context(const abi::AgentConfig &config, const ProbeMemoryLayout &layout,
                         uint8_t *host, uint64_t address, uint32_t index,
                         const std::string &kernel, uint64_t probe_mask,
                         const DeviceClock &clock = {},
                         std::optional<uint32_t> kernel_index = std::nullopt);

// Context INDEX's clock fields only (the layer moves a narrow clock's base forward).
void write_entry_clock(uint8_t *host, uint32_t index, const DeviceClock &clock);

// What the probes wrote, as the CUDA agent reports a context.
abi::DeviceImage read_probe_memory(const abi::AgentConfig &config,
                                   const ProbeMemoryLayout &layout, const uint8_t *host);

} // namespace gpubt::runtime::vulkan
