// The probes' clocks on a Vulkan device: `nsecs` reads the Device-scope shader clock and `clock`
// the Subgroup-scope one (VK_KHR_shader_clock). The layer puts the Device-scope clock on
// CLOCK_MONOTONIC, as the CUDA agent does %globaltimer, in gpubt_device_ctx's clock fields. It
// measures that clock itself, with a one-invocation dispatch that reads it between two host
// readings: the shader clock need not be the timestamp queries' clock that calibrated
// timestamps pair with the host's (on lavapipe it is not).
#pragma once
#include <cstdint>
#include <string>

#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include "runtime/abi/result.h"
#include "runtime/vulkan/probe_memory.h"

namespace gpubt::runtime::vulkan {

// What the probes' DeviceFeature bits ask of a device.
struct ClockNeeds {
  bool device = false;   // nsecs: shaderDeviceClock
  bool subgroup = false; // clock: shaderSubgroupClock
  bool any() const { return device || subgroup; }
  static ClockNeeds of(uint32_t features);
};

// Why the device cannot give the probes the clocks NEEDS asks for, or "". HAS_EXTENSION: the
// device offers VK_KHR_shader_clock; FEATURES2 the instance's vkGetPhysicalDeviceFeatures2.
std::string missing_clock(const ClockNeeds &needs, VkPhysicalDevice pd, bool has_extension,
                          PFN_vkGetPhysicalDeviceFeatures2 features2);

// What measuring the clock uses of a device the layer just created.
struct ClockDevice {
  VkDevice device = VK_NULL_HANDLE;
  PFN_vkGetDeviceProcAddr gdpa = nullptr;          // the next layer's
  PFN_vkSetDeviceLoaderData set_loader_data = nullptr; // for the command buffer and queue
  uint32_t queue_family = 0;                       // one with compute, that the program asked for
  float timestamp_period = 1;                      // the clock's nominal tick, if it is that one
  uint64_t scratch_address = 0;                    // 8 bytes the shader writes ...
  volatile uint64_t *scratch_host = nullptr;       // ... read here (host-coherent)
};

// A clock reading and the host's CLOCK_MONOTONIC around the submit that took it.
struct ClockSample {
  uint64_t ticks = 0;
  int64_t before = 0, after = 0;
  int64_t middle() const { return before + (after - before) / 2; }
};

// The clock's model from two readings (FIRST before LAST on the host), or why there is none (the
// clock did not advance). A clock whose readings all fit in 32 bits is taken as 32 bits wide:
// lavapipe's Device-scope clock is CLOCK_MONOTONIC's low 32 bits, which wrap every 4.29 s, and a
// wrap between the readings is no reason to stop. TIMESTAMP_PERIOD: the nominal tick (ns), taken
// where the readings cannot tell the measured one from it.
Result<DeviceClock> clock_model(const ClockSample &first, const ClockSample &last,
                                double timestamp_period);

// CLOCK with its base moved to the tick the model puts at NSECS (the same model). A clock
// narrower than 64 bits (mask) is unwrapped from its base: the layer moves the base forward as
// the program submits work, so that a probe's reading lies within 2^32 ticks of it.
DeviceClock rebased_clock(const DeviceClock &clock, int64_t nsecs);

// The Device-scope clock on CLOCK_MONOTONIC, from readings 20 ms apart, then 100 ms and 500 ms
// where the clock did not advance measurably. A busy machine never stops the probes: where no
// pair of readings gives a model, the lower-accuracy one is used (the nominal tick, and the
// offset of the narrowest single reading; with no reading at all, the raw clock) and NOTE says so.
// Empty WHY on success, lower accuracy included; only a device that cannot run the reading
// shader at all gives a WHY.
DeviceClock measure_device_clock(const ClockDevice &d, std::string &why, std::string &note);

} // namespace gpubt::runtime::vulkan
