// How gpubt finds and enables its Vulkan layer (runtime/vulkan) in a traced program.
#pragma once

namespace gpubt::runtime {

inline constexpr const char *kVulkanLayerName = "VK_LAYER_GPUBT_probes";
inline constexpr const char *kVulkanLayerManifest = "gpubt_vulkan_layer.json";

} // namespace gpubt::runtime
