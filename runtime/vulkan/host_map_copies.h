// The maps gpu probes write and host probes read (AgentConfig::host_maps, to_host), copied from
// the probes' memory into their BPF maps, as the CUDA agent does at each synchronization
// (runtime/cuda_agent/host_map_writeback.h): the layer does it after the program's waits and at the
// end, so host probes and END see what the shaders wrote. No Vulkan calls.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/abi/agent_protocol.h"
#include "runtime/vulkan/probe_memory.h"

namespace gpubt::runtime::vulkan {

// Writes every to_host map of CONFIG from HOST (the probes' memory, laid out as LAYOUT) into its
// BPF map (the fd the process inherited; -1: skipped). One message per map that failed.
std::vector<std::string> copy_maps_to_host(const abi::AgentConfig &config,
                                           const ProbeMemoryLayout &layout, const uint8_t *host);

} // namespace gpubt::runtime::vulkan
