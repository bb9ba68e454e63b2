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

namespace gpubt::runtime::vulkan {
namespace {

// Lavapipe's Device-scope clock is CLOCK_MONOTONIC's low 32 bits: readings 20 ms apart straddle
// its wrap (every 4.29 s) about once in 200 measurements, more on a loaded machine whose
// readings are further apart. That is no reason to refuse the probes ("the device clock did not
// advance" refused them before): the model takes the difference modulo 2^32 and still puts the
// first reading on the host's clock.
TEST(DeviceClockModel, AcrossA32BitWrap) {
  const int64_t host = 1599046343869; // CLOCK_MONOTONIC at the first reading
  ClockSample first{uint64_t(host) & 0xffffffff, host - 500, host + 500};
  const int64_t later = host + 4294967296 - (host & 0xffffffff) + 7000000; // 7 ms past the wrap
  ClockSample last{uint64_t(later) & 0xffffffff, later - 500, later + 500};
  ASSERT_LT(last.ticks, first.ticks);
  auto model = clock_model(first, last, 1.0);
  ASSERT_TRUE(model) << model.error();
  EXPECT_EQ(model->rate_q32, 0); // 1 ns a tick
  EXPECT_EQ(int64_t(first.ticks) + model->offset_ns, host);
}

TEST(DeviceClockModel, MeasuresTheTick) {
  // A 64-bit clock at 1.5 ns a tick, readings 100 ms apart with 10 us windows: not the nominal 1.
  ClockSample first{uint64_t(1) << 40, 1000000000, 1000010000};
  ClockSample last{first.ticks + 66666667, first.before + 100000000, first.after + 100000000};
  auto model = clock_model(first, last, 1.0);
  ASSERT_TRUE(model) << model.error();
  EXPECT_NEAR(1.0 + double(model->rate_q32) / 4294967296.0, 1.5, 1e-6);
  EXPECT_EQ(model->base, first.ticks);
}

// The nsecs a probe computes (device_abi.h's formula, as codegen's device_nsecs does it).
int64_t probe_nsecs(const DeviceClock &c, uint64_t t) {
  uint64_t since = t - c.base;
  if (c.mask)
    since &= c.mask;
  int64_t drift = int64_t((__int128(int64_t(since)) * c.rate_q32) >> 32);
  return int64_t(c.base + since) + c.offset_ns + drift;
}

// A 32-bit clock's readings are unwrapped from its base: the layer moves the base forward as work
// is submitted, and the model stays the same; readings 10 s later (two wraps) then come out right.
TEST(DeviceClockModel, ANarrowClockIsUnwrappedFromItsBase) {
  const int64_t host = 1599046343869;
  ClockSample first{uint64_t(host) & 0xffffffff, host - 500, host + 500};
  ClockSample last{uint64_t(host + 20000000) & 0xffffffff, host + 20000000 - 500,
                   host + 20000000 + 500};
  auto model = clock_model(first, last, 1.0);
  ASSERT_TRUE(model) << model.error();
  EXPECT_EQ(model->mask, 0xffffffffull);
  const int64_t later = host + 10000000000; // 10 s on
  uint64_t reading = uint64_t(later) & 0xffffffff;
  EXPECT_NE(probe_nsecs(*model, reading), later); // 2^32 ns off without a rebase
  DeviceClock moved = rebased_clock(*model, later - 100000000);
  EXPECT_EQ(probe_nsecs(moved, reading), later);
  // A drifting 64-bit clock keeps its model when rebased.
  DeviceClock wide{-5000, int64_t(0.25 * 4294967296.0), uint64_t(1) << 40, 0};
  DeviceClock wide_moved = rebased_clock(wide, probe_nsecs(wide, (uint64_t(1) << 40) + 8000000));
  for (uint64_t t : {uint64_t(1) << 40, (uint64_t(1) << 40) + 123456789})
    EXPECT_NEAR(double(probe_nsecs(wide_moved, t)), double(probe_nsecs(wide, t)), 2.0);
}

TEST(DeviceClockModel, AClockThatStandsStillHasNoModel) {
  ClockSample first{uint64_t(1) << 40, 1000, 2000}, last{uint64_t(1) << 40, 5000, 6000};
  auto model = clock_model(first, last, 1.0);
  ASSERT_FALSE(model);
  EXPECT_EQ(model.error(), "the device clock did not advance");
}

} // namespace
} // namespace gpubt::runtime::vulkan
