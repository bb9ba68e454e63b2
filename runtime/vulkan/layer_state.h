// The Vulkan layer's state, shared by its hooks (vulkan_layer.cpp: instances, devices, queues;
// pipeline_hooks.cpp: shaders, pipelines, dispatches): its config, and the instances and devices
// it has seen with the next layer's functions, behind one lock.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <vulkan/vulkan.h>

#include "runtime/abi/agent_protocol.h"
#include "runtime/vulkan/device_clock.h"
#include "runtime/vulkan/device_features.h"
#include "runtime/vulkan/entry_slots.h"
#include "runtime/vulkan/pipeline_recipe.h"
#include "runtime/vulkan/probe_memory.h"

namespace gpubt::runtime::vulkan {

// A `gpubt: vulkan:` line on stderr.
void say(const std::string &msg);

struct Config {
  bool active = false;
  // -l 'gpu:*' -c CMD: no probes, nothing changed; the names shaders are matched by are noted
  // (g_kernels) and written to the results.
  bool listing = false;
  abi::AgentConfig agent;
  std::vector<uint32_t> probes; // the probe module
  ProbeNeeds needs;
};

// GPUBT_AGENT_CONFIG's, read once; inactive without one.
const Config &config();

// A dispatchable handle's dispatch key: a device's, its queues' and command buffers' are one.
inline void *key(const void *handle) { return *static_cast<void *const *>(handle); }

// An instance's next-layer functions.
struct Instance : PhysicalDeviceQueries {
  VkInstance handle = VK_NULL_HANDLE;
  PFN_vkGetInstanceProcAddr gipa = nullptr;
  PFN_vkDestroyInstance destroy = nullptr;
  PFN_vkCreateDevice create_device = nullptr;
  PFN_vkGetPhysicalDeviceMemoryProperties memory_properties = nullptr;
  PFN_vkGetPhysicalDeviceQueueFamilyProperties queue_families = nullptr;
};

// A device's next-layer functions, the probes' memory on it, and what the hooks know of its
// shaders, pipelines and command buffers.
struct Device {
  VkDevice handle = VK_NULL_HANDLE;
  uint32_t index = 0;
  PFN_vkGetDeviceProcAddr gdpa = nullptr;
  PFN_vkDestroyDevice destroy = nullptr;
  PFN_vkCreateShaderModule create_shader_module = nullptr;
  PFN_vkCreateComputePipelines create_compute_pipelines = nullptr;
  PFN_vkCmdBindPipeline bind_pipeline = nullptr;
  PFN_vkCmdDispatch dispatch = nullptr;
  PFN_vkCmdDispatchBase dispatch_base = nullptr;
  PFN_vkCmdDispatchIndirect dispatch_indirect = nullptr;
  PFN_vkCmdPipelineBarrier pipeline_barrier = nullptr;
  PFN_vkDestroyShaderModule destroy_shader_module = nullptr;
  PFN_vkDestroyPipeline destroy_pipeline = nullptr;
  PFN_vkDestroyPipelineLayout destroy_pipeline_layout = nullptr;
  PFN_vkSetDebugUtilsObjectNameEXT set_object_name = nullptr;
  PFN_vkQueueSubmit queue_submit = nullptr;
  PFN_vkQueueSubmit2 queue_submit2 = nullptr;
  PFN_vkQueueWaitIdle queue_wait_idle = nullptr;
  PFN_vkDeviceWaitIdle device_wait_idle = nullptr;
  PFN_vkWaitForFences wait_for_fences = nullptr;
  PFN_vkDestroyBuffer destroy_buffer = nullptr;
  PFN_vkFreeMemory free_memory = nullptr;
  bool active = false; // the probes' memory exists: shaders get probes
  uint32_t subgroup_size = 32;
  float timestamp_period = 1; // ns per tick of the Device-scope clock
  DeviceClock clock;          // its model, when the probes read nsecs
  int64_t clock_rebased_ns = 0; // when a narrow clock's base was last moved (CLOCK_MONOTONIC)
  bool relaxed_atomics = false; // lavapipe: see relax_atomics.h
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint8_t *host = nullptr;
  uint64_t address = 0;
  ProbeMemoryLayout layout;
  // An instrumented entry point's probes and context slot.
  struct Entry {
    uint64_t mask = 0;
    uint32_t slot = 0;
  };
  EntrySlots slots{kMaxEntryContexts};
  uint32_t entries_made = 0; // kernel_index of the next
  std::map<VkShaderModule, std::map<std::string, Entry>> module_entries; // holds its slots
  using Code = std::shared_ptr<const std::vector<uint32_t>>;
  std::map<VkShaderModule, Code> originals;             // every live module's own code
  std::map<VkShaderModule, std::string> module_names;   // vkSetDebugUtilsObjectNameEXT's
  std::map<VkPipeline, PipelineRecipe> recipes;         // compute pipelines made without probes
  std::map<VkPipeline, VkPipeline> twins;               // ... and with them, made for a name
  std::map<VkPipeline, Entry> pipeline_entries; // holds its slot
  std::map<VkCommandBuffer, uint64_t> bound;
  // Listing: the modules with compute entry points and the compute pipelines, whose debug names
  // probes would match.
  std::set<uint64_t> compute_objects;
  std::vector<uint64_t> launches; // per probe: dispatches recorded with it
};

extern std::mutex g_mu;
extern std::map<void *, Instance> g_instances;
extern std::map<void *, Device> g_devices; // by dispatch key (devices, queues, command buffers)
// Entry points probes matched that run without them, on any device (each said as it happened;
// the results and the exit say how many).
extern uint32_t g_untraced;
// Every name compute entry points were matched by (SPIR-V entry points, pipeline debug names),
// for the results' did-you-mean when a probe matched none.
extern std::set<std::string> g_kernels;

} // namespace gpubt::runtime::vulkan
