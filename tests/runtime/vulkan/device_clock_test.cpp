// What a Vulkan device must have for probes that read nsecs or clock (device_clock.h): a device
// without it is refused with a sentence naming what is missing (the layer then leaves every
// shader as built). Lavapipe has it all, so the refusals are tested here against a fake device.
#include <gtest/gtest.h>

#include "runtime/abi/program_spec.h"
#include "runtime/vulkan/device_clock.h"

namespace gpubt::runtime::vulkan {
namespace {

VkBool32 g_device_clock = VK_FALSE, g_subgroup_clock = VK_FALSE;

void VKAPI_CALL fake_features2(VkPhysicalDevice, VkPhysicalDeviceFeatures2 *f) {
  for (auto *s = static_cast<VkBaseOutStructure *>(f->pNext); s; s = s->pNext)
    if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR) {
      auto *clock = reinterpret_cast<VkPhysicalDeviceShaderClockFeaturesKHR *>(s);
      clock->shaderDeviceClock = g_device_clock;
      clock->shaderSubgroupClock = g_subgroup_clock;
    }
}

std::string missing(uint32_t features, bool extension, bool device, bool subgroup) {
  g_device_clock = device;
  g_subgroup_clock = subgroup;
  return missing_clock(ClockNeeds::of(features), VK_NULL_HANDLE, extension, fake_features2);
}

TEST(DeviceClock, NeedsFollowTheProgramsFeatures) {
  EXPECT_FALSE(ClockNeeds::of(0).any());
  EXPECT_TRUE(ClockNeeds::of(abi::DeviceReadsClock).device);
  EXPECT_FALSE(ClockNeeds::of(abi::DeviceReadsClock).subgroup);
  EXPECT_TRUE(ClockNeeds::of(abi::DeviceReadsCycles).subgroup);
}

TEST(DeviceClock, RefusesADeviceWithoutTheClock) {
  EXPECT_EQ(missing(0, false, false, false), "");
  EXPECT_EQ(missing(abi::DeviceReadsClock, false, true, true),
            "the probes read nsecs and the device has no VK_KHR_shader_clock");
  EXPECT_EQ(missing(abi::DeviceReadsClock, true, false, true),
            "the probes read nsecs and the device has no shaderDeviceClock (VK_KHR_shader_clock)");
  EXPECT_EQ(missing(abi::DeviceReadsCycles, true, true, false),
            "the probes read clock and the device has no shaderSubgroupClock "
            "(VK_KHR_shader_clock)");
  EXPECT_EQ(missing(abi::DeviceReadsClock | abi::DeviceReadsCycles, true, true, true), "");
  EXPECT_EQ(missing(abi::DeviceReadsCycles, true, false, true), ""); // clock needs no device clock
}

} // namespace
} // namespace gpubt::runtime::vulkan
