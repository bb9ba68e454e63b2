// The layer's to_host map copies (host_map_copies.h).
#include "runtime/vulkan/host_map_copies.h"

#include "runtime/cuda_agent/host_map_writeback.h"

namespace gpubt::runtime::vulkan {

std::vector<std::string> copy_maps_to_host(const abi::AgentConfig &config,
                                           const ProbeMemoryLayout &layout, const uint8_t *host) {
  std::vector<std::string> errors;
  for (const auto &h : config.host_maps) {
    if (!h.to_host || h.fd < 0 || h.device_map >= layout.map_offsets.size())
      continue;
    const abi::DeviceMapSpec &spec = config.device.maps.at(h.device_map);
    auto n = agent::write_back_device_map(h.fd, {h.key_size, h.value_size, spec},
                                          host + layout.map_offsets[h.device_map],
                                          spec.storage_size());
    if (!n)
      errors.push_back(n.error());
  }
  return errors;
}

} // namespace gpubt::runtime::vulkan
