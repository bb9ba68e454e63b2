// The layer's hooks on shader modules, compute pipelines and dispatches (pipeline_hooks.h).
#include "runtime/vulkan/pipeline_hooks.h"

#include <cstdlib>
#include <fnmatch.h>
#include <fstream>
#include <optional>
#include <unistd.h>

#include "runtime/abi/device_abi.h"
#include "runtime/vulkan/layer_state.h"
#include "runtime/vulkan/link_probes.h"
#include "runtime/vulkan/relax_atomics.h"

namespace gpubt::runtime::vulkan {
namespace {

// The entry points of CODE in TARGETS (entry point -> the name probes match it by, which the
// probes read as `kernel`) with the probes linked in, and each one's probes; nothing where no
// probe matches or linking failed (said). The lock is held.
struct Instrumented {
  std::vector<uint32_t> code;
  std::map<std::string, Device::Entry> entries; // entry point -> probes, slot (held once)
};

// NAME, which probes matched, runs without them: said, and counted for the exit's summary.
void not_traced(const std::string &name, const std::string &why) {
  say(name + ": not traced: " + why);
  ++g_untraced;
}

void release(Device &d, const std::map<std::string, Device::Entry> &entries) {
  for (const auto &[name, e] : entries)
    d.slots.release(e.slot);
}
std::optional<Instrumented> instrument(Device &d, const std::vector<uint32_t> &code,
                                       const std::map<std::string, std::string> &targets) {
  const Config &c = config();
  std::vector<EntryProbes> entries;
  Instrumented out;
  for (const auto &[entry, name] : targets) {
    g_kernels.insert(name);
    EntryProbes e;
    e.entry = entry;
    uint64_t mask = 0;
    for (size_t i = 0; i < c.agent.device.probes.size() && i < 64; ++i)
      if (fnmatch(c.agent.device.probes[i].kernel.c_str(), name.c_str(), 0) == 0) {
        mask |= 1ull << i;
        e.calls.push_back({c.agent.device.probes[i].function + GPUBT_PROBE_DIRECT_SUFFIX,
                           c.agent.device.probes[i].point});
      }
    if (!mask)
      continue;
    auto slot = d.slots.take();
    if (!slot) {
      not_traced(name, "more than " + std::to_string(d.slots.capacity()) +
                              " instrumented entry points alive at once");
      continue;
    }
    write_entry_context(c.agent, d.layout, d.host, d.address, *slot, name, mask, d.clock,
                        d.entries_made++);
    e.ctx_address = d.address + ProbeMemoryLayout::ctx_offset(*slot);
    entries.push_back(std::move(e));
    out.entries[entry] = {mask, *slot};
  }
  if (entries.empty())
    return std::nullopt;
  auto linked = link_probes(code, d.relaxed_atomics ? relax_atomics(c.probes) : c.probes, entries,
                            d.subgroup_size);
  if (!linked) {
    not_traced(targets.at(entries[0].entry), linked.error());
    release(d, out.entries);
    return std::nullopt;
  }
  if (c.agent.verbose)
    for (const auto &e : entries)
      say("probes linked into " + targets.at(e.entry));
  // GPUBT_VULKAN_DUMP=DIR: each linked module as DIR/linked.<pid>.<n>.spv, for spirv-val.
  if (const char *dir = std::getenv("GPUBT_VULKAN_DUMP")) {
    static int n = 0;
    std::ofstream(std::string(dir) + "/linked." + std::to_string(getpid()) + "." +
                      std::to_string(n++) + ".spv",
                  std::ios::binary)
        .write(reinterpret_cast<const char *>(linked->data()), linked->size() * 4);
  }
  out.code = std::move(*linked);
  return out;
}

// Listing: the module's compute entry points are noted, and the module kept as one whose debug
// name probes would match; the program's module is made as it asked (LOCK is held).
VkResult list_module(std::unique_lock<std::mutex> &lock, VkDevice device,
                     const VkShaderModuleCreateInfo *info, const VkAllocationCallbacks *alloc,
                     VkShaderModule *out) {
  std::vector<uint32_t> code(info->pCode, info->pCode + info->codeSize / 4);
  auto entries = compute_entry_points(code);
  g_kernels.insert(entries.begin(), entries.end());
  auto create = g_devices[key(device)].create_shader_module;
  lock.unlock();
  VkResult r = create(device, info, alloc, out);
  lock.lock();
  if (r == VK_SUCCESS && !entries.empty())
    g_devices[key(device)].compute_objects.insert(uint64_t(*out));
  return r;
}

// Compute entry points are matched by their SPIR-V name here; by a debug name, at pipelines.
VKAPI_ATTR VkResult VKAPI_CALL CreateShaderModule(VkDevice device,
                                                  const VkShaderModuleCreateInfo *info,
                                                  const VkAllocationCallbacks *alloc,
                                                  VkShaderModule *out) {
  std::unique_lock<std::mutex> lock(g_mu);
  Device &d = g_devices[key(device)];
  auto create = d.create_shader_module;
  if (!d.active && config().listing)
    return list_module(lock, device, info, alloc, out);
  if (!d.active)
    return lock.unlock(), create(device, info, alloc, out);
  auto code = std::make_shared<const std::vector<uint32_t>>(info->pCode,
                                                            info->pCode + info->codeSize / 4);
  std::map<std::string, std::string> targets;
  for (const auto &name : compute_entry_points(*code))
    targets[name] = name;
  auto instrumented = instrument(d, *code, targets);
  lock.unlock();
  VkResult r = VK_ERROR_UNKNOWN;
  bool refused = false;
  if (instrumented) {
    VkShaderModuleCreateInfo mine = *info;
    mine.codeSize = instrumented->code.size() * 4;
    mine.pCode = instrumented->code.data();
    r = create(device, &mine, alloc, out);
    refused = r != VK_SUCCESS;
  }
  if (!instrumented || refused)
    r = create(device, info, alloc, out);
  lock.lock();
  Device &dd = g_devices[key(device)];
  if (instrumented && (refused || r != VK_SUCCESS)) {
    if (refused)
      not_traced(instrumented->entries.begin()->first,
                 "the driver refused the module (" + std::to_string(r) + ")");
    release(dd, instrumented->entries);
    instrumented.reset();
  }
  if (r != VK_SUCCESS)
    return r;
  if (instrumented)
    dd.module_entries[*out] = std::move(instrumented->entries);
  dd.originals[*out] = std::move(code);
  return r;
}

VKAPI_ATTR void VKAPI_CALL DestroyShaderModule(VkDevice device, VkShaderModule module,
                                               const VkAllocationCallbacks *alloc) {
  std::unique_lock<std::mutex> lock(g_mu);
  Device &d = g_devices[key(device)];
  d.originals.erase(module); // a handle may come back for another module
  d.compute_objects.erase(uint64_t(module));
  d.module_names.erase(module);
  if (auto m = d.module_entries.find(module); m != d.module_entries.end()) {
    release(d, m->second); // its pipelines hold their slots still
    d.module_entries.erase(m);
  }
  auto destroy = d.destroy_shader_module;
  lock.unlock();
  destroy(device, module, alloc);
}

PipelineFns pipeline_fns(const Device &d) {
  return {d.create_shader_module, d.destroy_shader_module, d.create_compute_pipelines};
}

// A pipeline the driver refuses with the probes in its shader is made again from the program's
// own module, with its cache and allocator (the program destroys it with that allocator).
VkResult create_uninstrumented(Device &d, VkDevice device, VkPipelineCache cache,
                               const VkComputePipelineCreateInfo &info,
                               const VkAllocationCallbacks *alloc, VkPipeline *out) {
  auto original = d.originals.find(info.stage.module);
  if (original == d.originals.end())
    return VK_ERROR_UNKNOWN;
  return make_pipeline_with_code(device, pipeline_fns(d), info, cache, alloc, *original->second,
                                 out);
}

// PIPELINE, made without probes, got NAME: where probes match the name, a twin with them is made,
// which vkCmdBindPipeline binds in its place (the lock is held).
void make_twin(Device &d, VkDevice device, VkPipeline pipeline, const std::string &name) {
  auto recipe = d.recipes.find(pipeline);
  if (recipe == d.recipes.end() || d.twins.count(pipeline))
    return;
  auto instrumented = instrument(d, recipe->second.code(), {{recipe->second.entry(), name}});
  if (!instrumented)
    return;
  VkPipeline twin = VK_NULL_HANDLE;
  VkResult r = recipe->second.make(device, pipeline_fns(d), instrumented->code, &twin);
  if (r != VK_SUCCESS) {
    not_traced(name, "the driver refused the pipeline with the probes (" + std::to_string(r) +
                            ")");
    release(d, instrumented->entries);
    return;
  }
  d.twins[pipeline] = twin;
  d.pipeline_entries[twin] = instrumented->entries.begin()->second; // holds the slot taken
}

VKAPI_ATTR VkResult VKAPI_CALL CreateComputePipelines(VkDevice device, VkPipelineCache cache,
                                                      uint32_t n,
                                                      const VkComputePipelineCreateInfo *infos,
                                                      const VkAllocationCallbacks *alloc,
                                                      VkPipeline *out) {
  PFN_vkCreateComputePipelines create;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    create = g_devices[key(device)].create_compute_pipelines;
  }
  VkResult r = create(device, cache, n, infos, alloc, out);
  std::lock_guard<std::mutex> lock(g_mu);
  Device &d = g_devices[key(device)];
  if (!d.active && config().listing)
    for (uint32_t i = 0; i < n; ++i)
      if (out[i] != VK_NULL_HANDLE)
        d.compute_objects.insert(uint64_t(out[i]));
  if (!d.active)
    return r;
  for (uint32_t i = 0; i < n; ++i) {
    const VkComputePipelineCreateInfo &info = infos[i];
    auto m = d.module_entries.find(info.stage.module);
    if (m == d.module_entries.end() || !m->second.count(info.stage.pName)) {
      auto original = d.originals.find(info.stage.module);
      if (out[i] == VK_NULL_HANDLE || original == d.originals.end())
        continue;
      d.recipes.emplace(out[i], PipelineRecipe(info, original->second));
      if (auto name = d.module_names.find(info.stage.module); name != d.module_names.end())
        make_twin(d, device, out[i], name->second);
      continue;
    }
    if (out[i] == VK_NULL_HANDLE) {
      not_traced(info.stage.pName,
                 "the driver refused the pipeline with the probes (" + std::to_string(r) + ")");
      VkResult again = create_uninstrumented(d, device, cache, info, alloc, &out[i]);
      if (again == VK_SUCCESS && r != VK_SUCCESS) {
        bool all = true;
        for (uint32_t k = 0; k < n; ++k)
          all = all && out[k] != VK_NULL_HANDLE;
        if (all)
          r = VK_SUCCESS;
      }
      continue;
    }
    const Device::Entry &e = m->second[info.stage.pName];
    d.slots.hold(e.slot);
    d.pipeline_entries[out[i]] = e;
  }
  return r;
}

VKAPI_ATTR void VKAPI_CALL DestroyPipeline(VkDevice device, VkPipeline pipeline,
                                           const VkAllocationCallbacks *alloc) {
  std::unique_lock<std::mutex> lock(g_mu);
  Device &d = g_devices[key(device)];
  auto destroy = d.destroy_pipeline;
  VkPipeline twin = VK_NULL_HANDLE;
  auto let_go = [&](VkPipeline p) {
    if (auto e = d.pipeline_entries.find(p); e != d.pipeline_entries.end()) {
      d.slots.release(e->second.slot);
      d.pipeline_entries.erase(e);
    }
  };
  if (auto t = d.twins.find(pipeline); t != d.twins.end()) {
    twin = t->second;
    let_go(twin);
    d.twins.erase(t);
  }
  d.recipes.erase(pipeline);
  d.compute_objects.erase(uint64_t(pipeline));
  let_go(pipeline);
  lock.unlock();
  if (twin)
    destroy(device, twin, nullptr);
  destroy(device, pipeline, alloc);
}

// A recipe whose layout is gone cannot make a twin any more.
VKAPI_ATTR void VKAPI_CALL DestroyPipelineLayout(VkDevice device, VkPipelineLayout layout,
                                                 const VkAllocationCallbacks *alloc) {
  std::unique_lock<std::mutex> lock(g_mu);
  Device &d = g_devices[key(device)];
  for (auto it = d.recipes.begin(); it != d.recipes.end();)
    it = it->second.layout() == layout ? d.recipes.erase(it) : std::next(it);
  auto destroy = d.destroy_pipeline_layout;
  lock.unlock();
  destroy(device, layout, alloc);
}

// Shaders are matched by the names programs give their modules and pipelines too (GLSL's entry
// points are all `main`).
VKAPI_ATTR VkResult VKAPI_CALL SetDebugUtilsObjectName(VkDevice device,
                                                       const VkDebugUtilsObjectNameInfoEXT *info) {
  std::lock_guard<std::mutex> lock(g_mu);
  Device &d = g_devices[key(device)];
  VkResult r = d.set_object_name ? d.set_object_name(device, info) : VK_SUCCESS;
  if (!info->pObjectName || !*info->pObjectName)
    return r;
  if (!d.active && config().listing && d.compute_objects.count(info->objectHandle) &&
      (info->objectType == VK_OBJECT_TYPE_SHADER_MODULE ||
       info->objectType == VK_OBJECT_TYPE_PIPELINE))
    g_kernels.insert(info->pObjectName);
  if (!d.active)
    return r;
  if (info->objectType == VK_OBJECT_TYPE_SHADER_MODULE) {
    auto module = reinterpret_cast<VkShaderModule>(info->objectHandle);
    d.module_names[module] = info->pObjectName;
    auto original = d.originals.find(module);
    for (auto &[pipeline, recipe] : d.recipes) // pipelines made from it before it had the name
      if (original != d.originals.end() && &recipe.code() == original->second.get())
        make_twin(d, device, pipeline, info->pObjectName);
  }
  if (info->objectType == VK_OBJECT_TYPE_PIPELINE)
    make_twin(d, device, reinterpret_cast<VkPipeline>(info->objectHandle), info->pObjectName);
  return r;
}

VKAPI_ATTR void VKAPI_CALL CmdBindPipeline(VkCommandBuffer cb, VkPipelineBindPoint point,
                                           VkPipeline pipeline) {
  PFN_vkCmdBindPipeline bind;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    Device &d = g_devices[key(cb)];
    bind = d.bind_pipeline;
    if (point == VK_PIPELINE_BIND_POINT_COMPUTE) {
      if (auto t = d.twins.find(pipeline); t != d.twins.end())
        pipeline = t->second;
      auto m = d.pipeline_entries.find(pipeline);
      d.bound[cb] = m == d.pipeline_entries.end() ? 0 : m->second.mask;
    }
  }
  bind(cb, point, pipeline);
}

// Launches are counted as dispatches are recorded (a command buffer submitted twice counts once).
// A dispatch of a pipeline whose probes keep per-launch state in its context (last_thread,
// launch_start: abi::DeviceLaunchState; block probes' words: abi::DeviceBlockState) waits for the compute work before it, and sees its
// writes: without a barrier between them a driver may run consecutive dispatches at once
// (NVIDIA's does; lavapipe runs them one by one), and their threads would count into one
// launch_exited, whose last thread resets it while the other dispatch still counts. A barrier
// only adds ordering, so the program's results stay as they were. The lock is held; the barrier
// is recorded after it is let go.
struct Dispatch {
  PFN_vkCmdPipelineBarrier barrier = nullptr; // or none needed
  void record(VkCommandBuffer cb) const {
    if (!barrier)
      return;
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_SHADER_WRITE_BIT,
                       VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
            &mb, 0, nullptr, 0, nullptr);
  }
};
template <typename F> Dispatch count_dispatch(VkCommandBuffer cb, F Device::*fn, F &next) {
  Device &d = g_devices[key(cb)];
  uint64_t mask = d.bound[cb];
  for (size_t i = 0; i < d.launches.size() && i < 64; ++i)
    d.launches[i] += (mask >> i) & 1;
  next = d.*fn;
  bool ordered =
      mask && (config().agent.device.features & (abi::DeviceLaunchState | abi::DeviceBlockState));
  return {ordered ? d.pipeline_barrier : nullptr};
}

VKAPI_ATTR void VKAPI_CALL CmdDispatch(VkCommandBuffer cb, uint32_t x, uint32_t y, uint32_t z) {
  std::unique_lock<std::mutex> lock(g_mu);
  PFN_vkCmdDispatch fn;
  Dispatch d = count_dispatch(cb, &Device::dispatch, fn);
  lock.unlock();
  d.record(cb);
  fn(cb, x, y, z);
}
VKAPI_ATTR void VKAPI_CALL CmdDispatchBase(VkCommandBuffer cb, uint32_t bx, uint32_t by,
                                           uint32_t bz, uint32_t x, uint32_t y, uint32_t z) {
  std::unique_lock<std::mutex> lock(g_mu);
  PFN_vkCmdDispatchBase fn;
  Dispatch d = count_dispatch(cb, &Device::dispatch_base, fn);
  lock.unlock();
  d.record(cb);
  fn(cb, bx, by, bz, x, y, z);
}
VKAPI_ATTR void VKAPI_CALL CmdDispatchIndirect(VkCommandBuffer cb, VkBuffer buffer,
                                               VkDeviceSize offset) {
  std::unique_lock<std::mutex> lock(g_mu);
  PFN_vkCmdDispatchIndirect fn;
  Dispatch d = count_dispatch(cb, &Device::dispatch_indirect, fn);
  lock.unlock();
  d.record(cb);
  fn(cb, buffer, offset);
}

} // namespace

PFN_vkVoidFunction pipeline_function(const char *name) {
  static const std::map<std::string, PFN_vkVoidFunction> fns = {
      {"vkCreateShaderModule", reinterpret_cast<PFN_vkVoidFunction>(CreateShaderModule)},
      {"vkDestroyShaderModule", reinterpret_cast<PFN_vkVoidFunction>(DestroyShaderModule)},
      {"vkCreateComputePipelines", reinterpret_cast<PFN_vkVoidFunction>(CreateComputePipelines)},
      {"vkDestroyPipeline", reinterpret_cast<PFN_vkVoidFunction>(DestroyPipeline)},
      {"vkDestroyPipelineLayout", reinterpret_cast<PFN_vkVoidFunction>(DestroyPipelineLayout)},
      {"vkSetDebugUtilsObjectNameEXT",
       reinterpret_cast<PFN_vkVoidFunction>(SetDebugUtilsObjectName)},
      {"vkCmdBindPipeline", reinterpret_cast<PFN_vkVoidFunction>(CmdBindPipeline)},
      {"vkCmdDispatch", reinterpret_cast<PFN_vkVoidFunction>(CmdDispatch)},
      {"vkCmdDispatchBase", reinterpret_cast<PFN_vkVoidFunction>(CmdDispatchBase)},
      {"vkCmdDispatchBaseKHR", reinterpret_cast<PFN_vkVoidFunction>(CmdDispatchBase)},
      {"vkCmdDispatchIndirect", reinterpret_cast<PFN_vkVoidFunction>(CmdDispatchIndirect)},
  };
  auto it = fns.find(name);
  return it == fns.end() ? nullptr : it->second;
}

} // namespace gpubt::runtime::vulkan
