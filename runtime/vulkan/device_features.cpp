// What the probes need of a Vulkan device (see device_features.h).
#include "runtime/vulkan/device_features.h"

#include <cstring>
#include <type_traits>

#include "runtime/abi/spirv_words.h"
#include "runtime/vulkan/vk_chain.h"

namespace gpubt::runtime::vulkan {
namespace {

std::vector<VkExtensionProperties> device_extensions(const PhysicalDeviceQueries &q,
                                                     VkPhysicalDevice pd) {
  uint32_t n = 0;
  q.extensions(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> have(n);
  q.extensions(pd, nullptr, &n, have.data());
  return have;
}

} // namespace

ProbeNeeds ProbeNeeds::of(const std::vector<uint32_t> &probes, uint32_t device_features) {
  ProbeNeeds n;
  n.clocks = ClockNeeds::of(device_features);
  // What the probes' OpCapability lines ask of the device.
  spirv::Module m;
  if (!m.parse(probes.data(), probes.size()))
    return n; // the layer links nothing it cannot parse
  n.storage_8bit = m.has_capability(spirv::CapStorageBuffer8BitAccess);
  if (m.has_capability(spirv::CapGroupNonUniformBallot))
    n.subgroup_ops |= VK_SUBGROUP_FEATURE_BALLOT_BIT;
  if (m.has_capability(spirv::CapGroupNonUniformShuffle))
    n.subgroup_ops |= VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
  return n;
}

std::string missing_features(const PhysicalDeviceQueries &q, VkPhysicalDevice pd,
                             const ProbeNeeds &needs) {
  if (!q.features2)
    return "vkGetPhysicalDeviceFeatures2 is missing (Vulkan 1.1 needed)";
  VkPhysicalDevice8BitStorageFeatures s8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  VkPhysicalDeviceShaderAtomicInt64Features a64{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES, &s8};
  VkPhysicalDeviceBufferDeviceAddressFeatures bda{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES, &a64};
  VkPhysicalDeviceFeatures2 f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &bda};
  q.features2(pd, &f);
  if (!bda.bufferDeviceAddress)
    return "no bufferDeviceAddress";
  if (!f.features.shaderInt64)
    return "no shaderInt64";
  if (!a64.shaderBufferInt64Atomics)
    return "no shaderBufferInt64Atomics";
  if (needs.storage_8bit && !s8.storageBuffer8BitAccess)
    return "no storageBuffer8BitAccess";
  if (!q.properties2)
    return "vkGetPhysicalDeviceProperties2 is missing (Vulkan 1.1 needed)";
  VkPhysicalDeviceSubgroupProperties sub{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 p{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sub};
  q.properties2(pd, &p);
  if (!(sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) ||
      (sub.supportedOperations & needs.subgroup_ops) != needs.subgroup_ops)
    return "compute shaders lack the subgroup operations the probes use (ballot, shuffle)";
  bool has_clock = false;
  for (const auto &e : device_extensions(q, pd))
    has_clock = has_clock || !std::strcmp(e.extensionName, "VK_KHR_shader_clock");
  return missing_clock(needs.clocks, pd, has_clock, q.features2);
}

void add_features(const PhysicalDeviceQueries &q, VkPhysicalDevice pd, const VkDeviceCreateInfo &in,
                  const ProbeNeeds &needs, DeviceFeatures &out) {
  out.info = in;
  auto *v12 = const_cast<VkPhysicalDeviceVulkan12Features *>(
      find_chain<VkPhysicalDeviceVulkan12Features>(
          in.pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES));
  auto *f2 = const_cast<VkPhysicalDeviceFeatures2 *>(
      find_chain<VkPhysicalDeviceFeatures2>(in.pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2));
  const void *head = in.pNext;
  auto enable = [&](auto *mine, VkStructureType type, auto set) {
    using T = std::remove_pointer_t<decltype(mine)>;
    if (auto *theirs = const_cast<T *>(find_chain<T>(in.pNext, type))) {
      set(theirs);
    } else {
      set(mine);
      mine->pNext = const_cast<void *>(head);
      head = mine;
    }
  };
  const ClockNeeds &clocks = needs.clocks;
  if (clocks.any()) // not in the Vulkan 1.2 struct
    enable(&out.clock, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR, [&](auto *s) {
      s->shaderDeviceClock |= clocks.device;
      s->shaderSubgroupClock |= clocks.subgroup;
    });
  if (v12) {
    v12->bufferDeviceAddress = v12->shaderBufferInt64Atomics = VK_TRUE;
    if (needs.storage_8bit)
      v12->storageBuffer8BitAccess = VK_TRUE;
  } else {
    enable(&out.bda, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES,
           [](auto *s) { s->bufferDeviceAddress = VK_TRUE; });
    enable(&out.a64, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES,
           [](auto *s) { s->shaderBufferInt64Atomics = VK_TRUE; });
    if (needs.storage_8bit)
      enable(&out.s8, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES,
             [](auto *s) { s->storageBuffer8BitAccess = VK_TRUE; });
  }
  out.info.pNext = head;
  if (f2) {
    f2->features.shaderInt64 = VK_TRUE;
  } else {
    if (in.pEnabledFeatures)
      out.features = *in.pEnabledFeatures;
    out.features.shaderInt64 = VK_TRUE;
    out.info.pEnabledFeatures = &out.features;
  }
  // The extensions, for programs on Vulkan 1.0/1.1 instances (1.2 has them in core).
  std::vector<VkExtensionProperties> have = device_extensions(q, pd);
  out.extensions.assign(in.ppEnabledExtensionNames,
                        in.ppEnabledExtensionNames + in.enabledExtensionCount);
  std::vector<const char *> wanted{"VK_KHR_buffer_device_address", "VK_KHR_shader_atomic_int64"};
  if (needs.storage_8bit)
    wanted.insert(wanted.end(), {"VK_KHR_8bit_storage", "VK_KHR_storage_buffer_storage_class"});
  if (clocks.any())
    wanted.push_back("VK_KHR_shader_clock");
  for (const char *w : wanted) {
    bool listed = false, offered = false;
    for (const char *e : out.extensions)
      listed = listed || !std::strcmp(e, w);
    for (const auto &e : have)
      offered = offered || !std::strcmp(e.extensionName, w);
    if (offered && !listed)
      out.extensions.push_back(w);
  }
  out.info.enabledExtensionCount = uint32_t(out.extensions.size());
  out.info.ppEnabledExtensionNames = out.extensions.data();
}

} // namespace gpubt::runtime::vulkan
