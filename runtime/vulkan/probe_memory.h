// The probes' device memory in a Vulkan device, as one host-visible buffer the shaders reach by
// its device address: a gpubt_device_ctx per instrumented entry point, the device maps and the
// printf ring (layouts of runtime/abi/device_abi.h). Pure layout and bytes: no Vulkan calls.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/abi/agent_protocol.h"

namespace gpubt::runtime::vulkan {

inline constexpr uint32_t kMaxEntryContexts = 256;

struct ProbeMemoryLayout {
  std::vector<uint64_t> map_offsets; // per DeviceMapSpec
  uint64_t ring_offset = 0;
  uint64_t size = 0;
  static ProbeMemoryLayout of(const abi::AgentConfig &config);
  static uint64_t ctx_offset(uint32_t index);
};

// Zeroed memory HOST (LAYOUT.size bytes at device address ADDRESS) made ready for the probes:
// map headers, prefilled entries, ring header.
void init_probe_memory(const abi::AgentConfig &config, const ProbeMemoryLayout &layout,
                       uint8_t *host);

// Context INDEX for entry point KERNEL, running the probes in PROBE_MASK.
void write_entry_context(const abi::AgentConfig &config, const ProbeMemoryLayout &layout,
                         uint8_t *host, uint64_t address, uint32_t index,
                         const std::string &kernel, uint64_t probe_mask);

// What the probes wrote, as the CUDA agent reports a context.
abi::DeviceImage read_probe_memory(const abi::AgentConfig &config,
                                   const ProbeMemoryLayout &layout, const uint8_t *host);

} // namespace gpubt::runtime::vulkan
