// What the probes need of a Vulkan device (buffer device addresses, 64-bit atomics, subgroup
// operations, the shader clock) and the program's VkDeviceCreateInfo with those turned on.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <vulkan/vulkan.h>

#include "runtime/vulkan/device_clock.h"

namespace gpubt::runtime::vulkan {

// What the probe module asks for, from its capabilities and the features codegen set.
struct ProbeNeeds {
  bool storage_8bit = false;
  // VkSubgroupFeatureFlags the probes use (the layer itself reads the subgroup's lane: basic).
  uint32_t subgroup_ops = VK_SUBGROUP_FEATURE_BASIC_BIT;
  ClockNeeds clocks;
  static ProbeNeeds of(const std::vector<uint32_t> &probe_module, uint32_t device_features);
};

// The instance's physical-device queries (Vulkan 1.1 or the KHR names).
struct PhysicalDeviceQueries {
  PFN_vkGetPhysicalDeviceFeatures2 features2 = nullptr;
  PFN_vkGetPhysicalDeviceProperties2 properties2 = nullptr;
  PFN_vkEnumerateDeviceExtensionProperties extensions = nullptr;
};

// Why PD cannot run the probes, or "".
std::string missing_features(const PhysicalDeviceQueries &q, VkPhysicalDevice pd,
                             const ProbeNeeds &needs);

// Owns the edited copies of a VkDeviceCreateInfo the probes need.
struct DeviceFeatures {
  VkPhysicalDeviceFeatures features{};
  VkPhysicalDeviceBufferDeviceAddressFeatures bda{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES};
  VkPhysicalDeviceShaderAtomicInt64Features a64{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES};
  VkPhysicalDevice8BitStorageFeatures s8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  VkPhysicalDeviceShaderClockFeaturesKHR clock{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR};
  std::vector<const char *> extensions;
  VkDeviceCreateInfo info{};
};

// IN with the probes' features and extensions on, in OUT.info. Features the program chains
// already are switched on where they are (the structs are the program's; the Vulkan 1.2 struct
// excludes the per-feature ones).
void add_features(const PhysicalDeviceQueries &q, VkPhysicalDevice pd, const VkDeviceCreateInfo &in,
                  const ProbeNeeds &needs, DeviceFeatures &out);

} // namespace gpubt::runtime::vulkan
