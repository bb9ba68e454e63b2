// VK_LAYER_GPUBT_probes: gpu probes in a program's Vulkan compute shaders. gpubt enables it in
// the -c child (VK_ADD_LAYER_PATH, VK_INSTANCE_LAYERS) with the agent config
// (GPUBT_AGENT_CONFIG). At vkCreateDevice it turns on buffer device addresses and 64-bit
// atomics and gives the probes one host-visible buffer; at vkCreateShaderModule it links the
// probes into the compute entry points they match by name, and where a module or pipeline gets
// a debug name they match, it binds a twin pipeline with them; after the program's waits for the
// GPU, at vkDestroyDevice and at exit it writes what the probes wrote into the results file the
// CUDA agent's results sit beside. Anything that fails leaves the program's objects as it made
// them, with a `gpubt:` line on stderr.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <unistd.h>
#include <vector>

#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include "runtime/abi/agent_protocol.h"
#include "runtime/vulkan/device_clock.h"
#include "runtime/vulkan/device_features.h"
#include "runtime/vulkan/host_map_copies.h"
#include "runtime/vulkan/layer_state.h"
#include "runtime/vulkan/live_sender.h"
#include "runtime/vulkan/pipeline_hooks.h"
#include "runtime/vulkan/probe_memory.h"
#include "runtime/vulkan/vk_chain.h"

#define GPUBT_EXPORT extern "C" __attribute__((visibility("default")))

namespace gpubt::runtime::vulkan {
namespace {

std::vector<abi::DeviceImage> g_done; // devices destroyed
uint32_t g_next_device = 0;
// Work was submitted since the results file was last written; when, and what writing it took
// (before the first write: from the first device's creation, and a nanosecond a byte of the
// probes' memory, a copy across PCIe and a file write at about 1 GB/s).
bool g_submitted = false;
int64_t g_written_ns = 0, g_write_cost_ns = 0;
// Work was submitted since the maps host probes read were last copied into their BPF maps.
bool g_copy_pending = false;
// The copies after waits are rate-limited by a token bucket (after_wait): its tokens, and when
// it was last filled.
constexpr double kCopyBurst = 16;
double g_copy_tokens = kCopyBurst;
int64_t g_copy_filled_ns = 0;

int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The maps gpu probes write and host probes read, from D's probe memory into their BPF maps
// (host_map_copies.h); each failure said once (the lock is held).
void copy_to_host(const Device &d) {
  static std::set<std::string> said;
  if (!d.active)
    return;
  for (const auto &e : copy_maps_to_host(config().agent, d.layout, d.host))
    if (said.insert(e).second)
      say("host probes do not see what the shaders wrote: " + e);
}

std::string untraced_summary() {
  return std::to_string(g_untraced) + " compute entry point(s) the probes matched ran without "
         "them (said above): their dispatches are not in the maps";
}

// Every device's probe memory as it is now, the destroyed ones' as they ended (the lock is held).
std::vector<abi::DeviceImage> device_images() {
  std::vector<abi::DeviceImage> images = g_done;
  for (auto &[k, d] : g_devices)
    if (d.active) {
      auto image = read_probe_memory(config().agent, d.layout, d.host);
      image.device = int32_t(d.index);
      image.probe_launches = d.launches;
      images.push_back(std::move(image));
    }
  return images;
}

// config().agent.live_ms: the maps sent to gpubt while the program runs, from the first device on.
std::unique_ptr<LiveSender> g_live;

void start_live_sender() {
  const abi::AgentConfig &c = config().agent;
  if (g_live || !c.live_ms || c.live_fd < 0)
    return;
  g_live = std::make_unique<LiveSender>(std::chrono::milliseconds(c.live_ms), c.live_fd, [] {
    std::lock_guard<std::mutex> lock(g_mu);
    abi::AgentResults r;
    r.images = device_images();
    return r;
  });
}

// Rewrites this process's results file with every device's probe memory (the lock is held).
void write_results() {
  const Config &c = config();
  abi::AgentResults results;
  results.images = device_images();
  if (g_untraced)
    results.messages.push_back(untraced_summary());
  results.untraced = g_untraced;
  if (c.listing || abi::some_probe_unmatched(results.images, c.agent.device.probes.size()))
    results.kernels = g_kernels;
  std::string path = c.agent.results_path + "." + std::to_string(getpid()) + ".vulkan";
  {
    std::ofstream out(path + ".tmp", std::ios::binary | std::ios::trunc);
    out << abi::write_agent_results(results);
  }
  std::rename((path + ".tmp").c_str(), path.c_str());
}

// After the program waited for the GPU: the results file again, so that a program killed before
// its exit still shows what the probes counted up to its last wait. A second apart at least, and
// at most 1% of the time: the probes' memory may be device memory read across PCIe, a keyed
// map's table tens of MiB (the lock is held).
void write_results_after_wait() {
  constexpr int64_t kSecond = 1000000000;
  int64_t now = monotonic_ns();
  if (!g_submitted || now - g_written_ns < std::max(kSecond, 100 * g_write_cost_ns))
    return;
  write_results();
  g_submitted = false;
  g_written_ns = monotonic_ns();
  g_write_cost_ns = g_written_ns - now;
}

void at_exit() {
  g_live.reset(); // it takes the lock
  std::lock_guard<std::mutex> lock(g_mu);
  for (const auto &[k, d] : g_devices)
    copy_to_host(d);
  write_results();
  if (g_untraced)
    say(untraced_summary());
}

// A memory type for the probes' buffer: host-visible and coherent, so the host reads what they
// wrote; device-local too where a heap holds it (a discrete GPU's BAR). NVIDIA's plain
// host-visible memory is system memory, where the probes' atomics cross PCIe: 2M of them cost a
// vector add 4x on the H100.
uint32_t probe_memory_type(const VkPhysicalDeviceMemoryProperties &props,
                           const VkMemoryRequirements &req) {
  VkMemoryPropertyFlags host =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (VkMemoryPropertyFlags want : {host | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, host})
    for (uint32_t i = 0; i < props.memoryTypeCount; ++i) {
      const VkMemoryType &t = props.memoryTypes[i];
      if ((req.memoryTypeBits & (1u << i)) && (t.propertyFlags & want) == want &&
          props.memoryHeaps[t.heapIndex].size >= req.size)
        return i;
    }
  return UINT32_MAX;
}

// The probes' buffer (probe_memory_type), mapped.
std::string make_probe_memory(const Instance &inst, VkPhysicalDevice pd, Device &d) {
  const Config &c = config();
  auto get = [&](const char *name) { return d.gdpa(d.handle, name); };
  auto create_buffer = reinterpret_cast<PFN_vkCreateBuffer>(get("vkCreateBuffer"));
  auto requirements =
      reinterpret_cast<PFN_vkGetBufferMemoryRequirements>(get("vkGetBufferMemoryRequirements"));
  auto allocate = reinterpret_cast<PFN_vkAllocateMemory>(get("vkAllocateMemory"));
  auto bind = reinterpret_cast<PFN_vkBindBufferMemory>(get("vkBindBufferMemory"));
  auto map = reinterpret_cast<PFN_vkMapMemory>(get("vkMapMemory"));
  auto address = reinterpret_cast<PFN_vkGetBufferDeviceAddress>(get("vkGetBufferDeviceAddress"));
  if (!address)
    address = reinterpret_cast<PFN_vkGetBufferDeviceAddress>(get("vkGetBufferDeviceAddressKHR"));
  if (!create_buffer || !requirements || !allocate || !bind || !map || !address)
    return "a device function is missing";
  d.layout = ProbeMemoryLayout::of(c.agent);
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = d.layout.size;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
  if (create_buffer(d.handle, &bi, nullptr, &d.buffer) != VK_SUCCESS)
    return "vkCreateBuffer failed";
  VkMemoryRequirements req;
  requirements(d.handle, d.buffer, &req);
  VkPhysicalDeviceMemoryProperties props;
  inst.memory_properties(pd, &props);
  uint32_t type = probe_memory_type(props, req);
  if (type == UINT32_MAX)
    return "no host-visible coherent memory for the probes' buffer";
  VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &flags, req.size, type};
  if (allocate(d.handle, &ai, nullptr, &d.memory) != VK_SUCCESS)
    return "allocating " + std::to_string(req.size) + " bytes for the probes failed";
  void *host = nullptr;
  if (bind(d.handle, d.buffer, d.memory, 0) != VK_SUCCESS ||
      map(d.handle, d.memory, 0, VK_WHOLE_SIZE, 0, &host) != VK_SUCCESS)
    return "mapping the probes' memory failed";
  d.host = static_cast<uint8_t *>(host);
  std::memset(d.host, 0, d.layout.size);
  init_probe_memory(c.agent, d.layout, d.host);
  VkBufferDeviceAddressInfo info{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, nullptr, d.buffer};
  d.address = address(d.handle, &info);
  return d.address ? "" : "no device address for the probes' buffer";
}

// nsecs: the Device-scope clock measured on a queue the program asked for (device_clock.h).
std::string measure_clock(const Instance &inst, VkPhysicalDevice pd, const VkDeviceCreateInfo &info,
                          PFN_vkSetDeviceLoaderData set_loader_data, Device &d) {
  ClockDevice cd{d.handle, d.gdpa, set_loader_data, UINT32_MAX, d.timestamp_period,
                 d.address + d.layout.scratch_offset,
                 reinterpret_cast<volatile uint64_t *>(d.host + d.layout.scratch_offset)};
  uint32_t n = 0;
  inst.queue_families(pd, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  inst.queue_families(pd, &n, families.data());
  for (uint32_t i = 0; i < info.queueCreateInfoCount && cd.queue_family == UINT32_MAX; ++i) {
    uint32_t f = info.pQueueCreateInfos[i].queueFamilyIndex;
    if (f < n && (families[f].queueFlags & VK_QUEUE_COMPUTE_BIT))
      cd.queue_family = f;
  }
  if (cd.queue_family == UINT32_MAX)
    return "the probes read nsecs and the program's device has no compute queue to measure its "
           "clock on";
  std::string why, note;
  d.clock = measure_device_clock(cd, why, note);
  if (!note.empty())
    say(note);
  else if (why.empty() && config().agent.verbose)
    say("nsecs: the shader clock ticks every " +
        std::to_string(1 + double(d.clock.rate_q32) / 4294967296.0) + " ns");
  return why.empty() ? "" : "the probes read nsecs and its clock could not be measured: " + why;
}

// The subgroup size, the clock's tick, and whether the probes' atomics must be relaxed
// (relax_atomics.h).
void read_device_traits(const Instance &inst, VkPhysicalDevice pd, Device &d) {
  if (!inst.properties2)
    return;
  VkPhysicalDeviceSubgroupProperties sub{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 p{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sub};
  inst.properties2(pd, &p);
  if (sub.subgroupSize)
    d.subgroup_size = sub.subgroupSize;
  d.timestamp_period = p.properties.limits.timestampPeriod;
  if (p.properties.apiVersion < VK_API_VERSION_1_2) // no VkPhysicalDeviceDriverProperties
    return;
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  p.pNext = &driver;
  inst.properties2(pd, &p);
  d.relaxed_atomics = driver.driverID == VK_DRIVER_ID_MESA_LLVMPIPE;
}

VKAPI_ATTR VkResult VKAPI_CALL CreateInstance(const VkInstanceCreateInfo *info,
                                              const VkAllocationCallbacks *alloc,
                                              VkInstance *out) {
  auto *chain = loader_link<VkLayerInstanceCreateInfo>(
      info->pNext, VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO);
  if (!chain)
    return VK_ERROR_INITIALIZATION_FAILED;
  PFN_vkGetInstanceProcAddr gipa = chain->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  chain->u.pLayerInfo = chain->u.pLayerInfo->pNext;
  auto create = reinterpret_cast<PFN_vkCreateInstance>(gipa(VK_NULL_HANDLE, "vkCreateInstance"));
  // Buffer device addresses and 64-bit atomics are Vulkan 1.2: a program asking for 1.0 (most
  // do) gets a 1.2 instance, which keeps every 1.0 behaviour, so the device can report them.
  VkInstanceCreateInfo mine = *info;
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  if (info->pApplicationInfo)
    app = *info->pApplicationInfo;
  if (config().active && app.apiVersion < VK_API_VERSION_1_2) {
    app.apiVersion = VK_API_VERSION_1_2;
    mine.pApplicationInfo = &app;
  }
  VkResult r = create(&mine, alloc, out);
  if (r != VK_SUCCESS && mine.pApplicationInfo != info->pApplicationInfo)
    r = create(info, alloc, out); // a 1.1 loader
  if (r != VK_SUCCESS)
    return r;
  Instance inst;
  inst.handle = *out;
  inst.gipa = gipa;
  auto get = [&](const char *name) { return gipa(*out, name); };
  inst.destroy = reinterpret_cast<PFN_vkDestroyInstance>(get("vkDestroyInstance"));
  inst.create_device = reinterpret_cast<PFN_vkCreateDevice>(get("vkCreateDevice"));
  inst.memory_properties = reinterpret_cast<PFN_vkGetPhysicalDeviceMemoryProperties>(
      get("vkGetPhysicalDeviceMemoryProperties"));
  inst.features2 =
      reinterpret_cast<PFN_vkGetPhysicalDeviceFeatures2>(get("vkGetPhysicalDeviceFeatures2"));
  if (!inst.features2)
    inst.features2 =
        reinterpret_cast<PFN_vkGetPhysicalDeviceFeatures2>(get("vkGetPhysicalDeviceFeatures2KHR"));
  inst.properties2 =
      reinterpret_cast<PFN_vkGetPhysicalDeviceProperties2>(get("vkGetPhysicalDeviceProperties2"));
  if (!inst.properties2)
    inst.properties2 = reinterpret_cast<PFN_vkGetPhysicalDeviceProperties2>(
        get("vkGetPhysicalDeviceProperties2KHR"));
  inst.extensions = reinterpret_cast<PFN_vkEnumerateDeviceExtensionProperties>(
      get("vkEnumerateDeviceExtensionProperties"));
  inst.queue_families = reinterpret_cast<PFN_vkGetPhysicalDeviceQueueFamilyProperties>(
      get("vkGetPhysicalDeviceQueueFamilyProperties"));
  std::lock_guard<std::mutex> lock(g_mu);
  g_instances[key(*out)] = inst;
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL DestroyInstance(VkInstance instance, const VkAllocationCallbacks *alloc) {
  PFN_vkDestroyInstance destroy;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    destroy = g_instances[key(instance)].destroy;
    g_instances.erase(key(instance));
  }
  destroy(instance, alloc);
}

VKAPI_ATTR VkResult VKAPI_CALL CreateDevice(VkPhysicalDevice pd, const VkDeviceCreateInfo *info,
                                            const VkAllocationCallbacks *alloc, VkDevice *out) {
  auto *chain =
      loader_link<VkLayerDeviceCreateInfo>(info->pNext, VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO);
  if (!chain)
    return VK_ERROR_INITIALIZATION_FAILED;
  PFN_vkGetInstanceProcAddr gipa = chain->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  PFN_vkGetDeviceProcAddr gdpa = chain->u.pLayerInfo->pfnNextGetDeviceProcAddr;
  chain->u.pLayerInfo = chain->u.pLayerInfo->pNext;
  PFN_vkSetDeviceLoaderData set_loader_data = nullptr;
  for (auto *c = find_chain<VkLayerDeviceCreateInfo>(info->pNext,
                                                     VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO);
       c; c = find_chain<VkLayerDeviceCreateInfo>(c->pNext,
                                                  VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO))
    if (c->function == VK_LOADER_DATA_CALLBACK)
      set_loader_data = c->u.pfnSetDeviceLoaderData;
  Instance inst;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    inst = g_instances[key(pd)];
  }
  auto create = reinterpret_cast<PFN_vkCreateDevice>(gipa(inst.handle, "vkCreateDevice"));
  std::string why = config().active ? missing_features(inst, pd, config().needs) : "inactive";
  VkResult r = VK_ERROR_INITIALIZATION_FAILED;
  bool probes = why.empty();
  if (probes) {
    DeviceFeatures features;
    add_features(inst, pd, *info, config().needs, features);
    r = create(pd, &features.info, alloc, out);
    if (r != VK_SUCCESS) {
      why = "the device did not take the probes' features (" + std::to_string(r) + ")";
      probes = false;
    }
  }
  if (!probes) {
    if (config().active)
      say("compute shaders are not traced: " + why);
    r = create(pd, info, alloc, out);
    if (r != VK_SUCCESS)
      return r;
  }
  Device d;
  d.handle = *out;
  d.gdpa = gdpa;
  auto get = [&](const char *name) { return gdpa(*out, name); };
  d.destroy = reinterpret_cast<PFN_vkDestroyDevice>(get("vkDestroyDevice"));
  d.create_shader_module = reinterpret_cast<PFN_vkCreateShaderModule>(get("vkCreateShaderModule"));
  d.create_compute_pipelines =
      reinterpret_cast<PFN_vkCreateComputePipelines>(get("vkCreateComputePipelines"));
  d.bind_pipeline = reinterpret_cast<PFN_vkCmdBindPipeline>(get("vkCmdBindPipeline"));
  d.dispatch = reinterpret_cast<PFN_vkCmdDispatch>(get("vkCmdDispatch"));
  d.dispatch_base = reinterpret_cast<PFN_vkCmdDispatchBase>(get("vkCmdDispatchBase"));
  if (!d.dispatch_base)
    d.dispatch_base = reinterpret_cast<PFN_vkCmdDispatchBase>(get("vkCmdDispatchBaseKHR"));
  d.dispatch_indirect = reinterpret_cast<PFN_vkCmdDispatchIndirect>(get("vkCmdDispatchIndirect"));
  d.pipeline_barrier = reinterpret_cast<PFN_vkCmdPipelineBarrier>(get("vkCmdPipelineBarrier"));
  d.destroy_shader_module =
      reinterpret_cast<PFN_vkDestroyShaderModule>(get("vkDestroyShaderModule"));
  d.destroy_pipeline = reinterpret_cast<PFN_vkDestroyPipeline>(get("vkDestroyPipeline"));
  d.destroy_pipeline_layout =
      reinterpret_cast<PFN_vkDestroyPipelineLayout>(get("vkDestroyPipelineLayout"));
  d.set_object_name =
      reinterpret_cast<PFN_vkSetDebugUtilsObjectNameEXT>(get("vkSetDebugUtilsObjectNameEXT"));
  d.queue_submit = reinterpret_cast<PFN_vkQueueSubmit>(get("vkQueueSubmit"));
  d.queue_submit2 = reinterpret_cast<PFN_vkQueueSubmit2>(get("vkQueueSubmit2"));
  if (!d.queue_submit2)
    d.queue_submit2 = reinterpret_cast<PFN_vkQueueSubmit2>(get("vkQueueSubmit2KHR"));
  d.queue_wait_idle = reinterpret_cast<PFN_vkQueueWaitIdle>(get("vkQueueWaitIdle"));
  d.device_wait_idle = reinterpret_cast<PFN_vkDeviceWaitIdle>(get("vkDeviceWaitIdle"));
  d.wait_for_fences = reinterpret_cast<PFN_vkWaitForFences>(get("vkWaitForFences"));
  d.destroy_buffer = reinterpret_cast<PFN_vkDestroyBuffer>(get("vkDestroyBuffer"));
  d.free_memory = reinterpret_cast<PFN_vkFreeMemory>(get("vkFreeMemory"));
  d.launches.assign(config().agent.device.probes.size(), 0);
  // GPUBT_VULKAN_ENTRY_SLOTS=N: fewer instrumented entry points at once, for tests of the limit.
  if (const char *n = std::getenv("GPUBT_VULKAN_ENTRY_SLOTS"))
    d.slots = EntrySlots(std::min<uint32_t>(uint32_t(std::strtoul(n, nullptr, 10)),
                                            kMaxEntryContexts));
  if (probes) {
    read_device_traits(inst, pd, d);
    why = make_probe_memory(inst, pd, d);
    if (why.empty() && config().needs.clocks.device)
      why = measure_clock(inst, pd, *info, set_loader_data, d);
    d.active = why.empty();
    if (!d.active)
      say("compute shaders are not traced: " + why);
  }
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_next_device == 0)
    g_written_ns = monotonic_ns();
  if (d.active)
    g_write_cost_ns += int64_t(d.layout.size);
  d.index = g_next_device++;
  if (d.active)
    start_live_sender();
  g_devices[key(*out)] = std::move(d);
  static bool registered = (std::atexit(at_exit), true);
  (void)registered;
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL DestroyDevice(VkDevice device, const VkAllocationCallbacks *alloc) {
  std::unique_lock<std::mutex> lock(g_mu);
  auto it = g_devices.find(key(device));
  if (it == g_devices.end())
    return;
  Device d = std::move(it->second);
  if (d.active) {
    auto image = read_probe_memory(config().agent, d.layout, d.host);
    image.device = int32_t(d.index);
    image.probe_launches = d.launches;
    g_done.push_back(std::move(image));
  }
  g_devices.erase(it);
  copy_to_host(d);
  if (d.active)
    write_results(); // before the memory goes
  lock.unlock();
  if (d.active) {
    d.destroy_buffer(device, d.buffer, nullptr);
    d.free_memory(device, d.memory, nullptr); // unmaps
  }
  d.destroy(device, alloc);
}


// A clock narrower than 64 bits (lavapipe's) is unwrapped by the probes from its base, within
// 2^32 ticks of it (device_clock.h): before work is submitted, the base moves to 100 ms before
// now, a second apart at most, in every context (the lock is held). A dispatch's readings are
// then right for the 4.29 s after its submit.
void rebase_narrow_clock(Device &d) {
  constexpr int64_t kSecond = 1000000000;
  int64_t now = monotonic_ns();
  if (!d.active || !d.clock.mask || now - d.clock_rebased_ns < kSecond)
    return;
  d.clock = rebased_clock(d.clock, now - kSecond / 10);
  for (uint32_t i = 0; i < d.slots.used(); ++i)
    write_entry_clock(d.host, i, d.clock);
  d.clock_rebased_ns = now;
}

// Work submitted on a traced device: the next wait writes the results file.
template <typename Info, typename F>
VkResult submit(F Device::*fn, VkQueue queue, uint32_t n, const Info *submits, VkFence fence) {
  std::unique_lock<std::mutex> lock(g_mu);
  Device &d = g_devices[key(queue)];
  rebase_narrow_clock(d);
  g_submitted = g_submitted || d.active;
  g_copy_pending = g_copy_pending || d.active;
  F next = d.*fn;
  lock.unlock();
  return next(queue, n, submits, fence);
}
VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit(VkQueue queue, uint32_t n, const VkSubmitInfo *submits,
                                           VkFence fence) {
  return submit(&Device::queue_submit, queue, n, submits, fence);
}
VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit2(VkQueue queue, uint32_t n,
                                            const VkSubmitInfo2 *submits, VkFence fence) {
  return submit(&Device::queue_submit2, queue, n, submits, fence);
}

// The program waited for the GPU: the maps host probes read get what the shaders wrote (as the
// CUDA agent copies them at synchronizations: host probes that run next see it), and the
// probes' results so far go to the results file. A program that waited thousands of times a
// second had all those maps copied after each wait: the copies now take tokens from a bucket of
// 16 that fills at 100 a second, one each plus one per 100 us the copy took, so that a few
// waits in a row are each copied, a storm of them about 100 times a second, and copies of big
// maps take at most about 1% of the time. A wait without a token leaves the copy pending for a
// later one; the device's end and the exit copy whatever is left.
VkResult after_wait(VkResult r) {
  if (r == VK_SUCCESS) {
    std::lock_guard<std::mutex> lock(g_mu);
    int64_t now = monotonic_ns();
    g_copy_tokens = std::min(kCopyBurst, g_copy_tokens + double(now - g_copy_filled_ns) / 1e7);
    g_copy_filled_ns = now;
    if (g_copy_pending && g_copy_tokens >= 1) {
      for (const auto &[k, d] : g_devices)
        copy_to_host(d);
      g_copy_pending = false;
      g_copy_tokens -= 1 + double(monotonic_ns() - now) / 1e5;
    }
    write_results_after_wait();
  }
  return r;
}
template <typename F> F next_fn(const void *handle, F Device::*fn) {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_devices[key(handle)].*fn;
}
VKAPI_ATTR VkResult VKAPI_CALL QueueWaitIdle(VkQueue queue) {
  return after_wait(next_fn(queue, &Device::queue_wait_idle)(queue));
}
VKAPI_ATTR VkResult VKAPI_CALL DeviceWaitIdle(VkDevice device) {
  return after_wait(next_fn(device, &Device::device_wait_idle)(device));
}
VKAPI_ATTR VkResult VKAPI_CALL WaitForFences(VkDevice device, uint32_t n, const VkFence *fences,
                                             VkBool32 all, uint64_t timeout) {
  return after_wait(next_fn(device, &Device::wait_for_fences)(device, n, fences, all, timeout));
}

PFN_vkVoidFunction device_function(const char *name) {
  static const std::map<std::string, PFN_vkVoidFunction> fns = {
      {"vkDestroyDevice", reinterpret_cast<PFN_vkVoidFunction>(DestroyDevice)},
      {"vkQueueSubmit", reinterpret_cast<PFN_vkVoidFunction>(QueueSubmit)},
      {"vkQueueSubmit2", reinterpret_cast<PFN_vkVoidFunction>(QueueSubmit2)},
      {"vkQueueSubmit2KHR", reinterpret_cast<PFN_vkVoidFunction>(QueueSubmit2)},
      {"vkQueueWaitIdle", reinterpret_cast<PFN_vkVoidFunction>(QueueWaitIdle)},
      {"vkDeviceWaitIdle", reinterpret_cast<PFN_vkVoidFunction>(DeviceWaitIdle)},
      {"vkWaitForFences", reinterpret_cast<PFN_vkVoidFunction>(WaitForFences)},
  };
  auto it = fns.find(name);
  return it != fns.end() ? it->second : pipeline_function(name);
}
} // namespace
} // namespace gpubt::runtime::vulkan

using namespace gpubt::runtime::vulkan;

GPUBT_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetDeviceProcAddr(VkDevice device,
                                                                          const char *name) {
  if (!std::strcmp(name, "vkGetDeviceProcAddr"))
    return reinterpret_cast<PFN_vkVoidFunction>(vkGetDeviceProcAddr);
  PFN_vkGetDeviceProcAddr next;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    next = g_devices[key(device)].gdpa;
  }
  PFN_vkVoidFunction theirs = next(device, name);
  // A function the device lacks (vkQueueSubmit2 before Vulkan 1.3) stays missing.
  PFN_vkVoidFunction mine = device_function(name);
  return mine && theirs ? mine : theirs;
}

GPUBT_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetInstanceProcAddr(VkInstance instance,
                                                                            const char *name) {
  if (!std::strcmp(name, "vkGetInstanceProcAddr"))
    return reinterpret_cast<PFN_vkVoidFunction>(vkGetInstanceProcAddr);
  if (!std::strcmp(name, "vkCreateInstance"))
    return reinterpret_cast<PFN_vkVoidFunction>(CreateInstance);
  if (!std::strcmp(name, "vkDestroyInstance"))
    return reinterpret_cast<PFN_vkVoidFunction>(DestroyInstance);
  if (!std::strcmp(name, "vkCreateDevice"))
    return reinterpret_cast<PFN_vkVoidFunction>(CreateDevice);
  if (!std::strcmp(name, "vkGetDeviceProcAddr"))
    return reinterpret_cast<PFN_vkVoidFunction>(vkGetDeviceProcAddr);
  if (auto fn = device_function(name))
    return fn;
  if (!instance)
    return nullptr;
  std::lock_guard<std::mutex> lock(g_mu);
  return g_instances[key(instance)].gipa(instance, name);
}
