// The probes' clocks on a Vulkan device (see device_clock.h).
#include "runtime/vulkan/device_clock.h"

#include <cmath>
#include <ctime>
#include <thread>
#include <vector>

#include <spirv-tools/libspirv.hpp>

#include "runtime/abi/program_spec.h"

namespace gpubt::runtime::vulkan {

namespace {

// *(uint64_t *)push.address = the Device-scope clock.
constexpr const char *kClockShader = R"(
               OpCapability Shader
               OpCapability Int64
               OpCapability ShaderClockKHR
               OpCapability PhysicalStorageBufferAddresses
               OpExtension "SPV_KHR_shader_clock"
               OpExtension "SPV_KHR_physical_storage_buffer"
               OpMemoryModel PhysicalStorageBuffer64 GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %Push Block
               OpMemberDecorate %Push 0 Offset 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
      %ulong = OpTypeInt 64 0
       %uint = OpTypeInt 32 0
     %device = OpConstant %uint 1
     %uint_0 = OpConstant %uint 0
       %Push = OpTypeStruct %ulong
   %push_ptr = OpTypePointer PushConstant %Push
  %ulong_ptr = OpTypePointer PushConstant %ulong
    %out_ptr = OpTypePointer PhysicalStorageBuffer %ulong
       %push = OpVariable %push_ptr PushConstant
       %main = OpFunction %void None %fn
      %entry = OpLabel
       %addr = OpAccessChain %ulong_ptr %push %uint_0
          %a = OpLoad %ulong %addr
          %p = OpConvertUToPtr %out_ptr %a
          %t = OpReadClockKHR %ulong %device
               OpStore %p %t Aligned 8
               OpReturn
               OpFunctionEnd
)";

int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

using Sample = ClockSample;

// The measuring dispatch's Vulkan objects, destroyed with it.
class ClockDispatch {
public:
  explicit ClockDispatch(const ClockDevice &d) : d_(d) {}
  ~ClockDispatch() {
    auto dev = d_.device;
    if (pending_) // a reading that never came: nothing it uses may go before it is done
      fn<PFN_vkQueueWaitIdle>("vkQueueWaitIdle")(queue_);
    if (fence_)
      fn<PFN_vkDestroyFence>("vkDestroyFence")(dev, fence_, nullptr);
    if (pool_)
      fn<PFN_vkDestroyCommandPool>("vkDestroyCommandPool")(dev, pool_, nullptr);
    if (pipeline_)
      fn<PFN_vkDestroyPipeline>("vkDestroyPipeline")(dev, pipeline_, nullptr);
    if (layout_)
      fn<PFN_vkDestroyPipelineLayout>("vkDestroyPipelineLayout")(dev, layout_, nullptr);
    if (module_)
      fn<PFN_vkDestroyShaderModule>("vkDestroyShaderModule")(dev, module_, nullptr);
  }

  // The pipeline and a command buffer that runs it once; "" or why not.
  std::string create() {
    std::vector<uint32_t> code;
    if (!spvtools::SpirvTools(SPV_ENV_UNIVERSAL_1_0).Assemble(kClockShader, &code))
      return "BUG: the clock shader does not assemble";
    auto dev = d_.device;
    VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    mi.codeSize = code.size() * 4;
    mi.pCode = code.data();
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, 8};
    VkPipelineLayoutCreateInfo li{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    li.pushConstantRangeCount = 1;
    li.pPushConstantRanges = &range;
    if (fn<PFN_vkCreateShaderModule>("vkCreateShaderModule")(dev, &mi, nullptr, &module_) ||
        fn<PFN_vkCreatePipelineLayout>("vkCreatePipelineLayout")(dev, &li, nullptr, &layout_))
      return "the clock-reading shader was refused";
    VkComputePipelineCreateInfo pi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    pi.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    pi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pi.stage.module = module_;
    pi.stage.pName = "main";
    pi.layout = layout_;
    if (fn<PFN_vkCreateComputePipelines>("vkCreateComputePipelines")(dev, VK_NULL_HANDLE, 1, &pi,
                                                                      nullptr, &pipeline_))
      return "the clock-reading pipeline was refused";
    VkCommandPoolCreateInfo ci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    ci.queueFamilyIndex = d_.queue_family;
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (fn<PFN_vkCreateCommandPool>("vkCreateCommandPool")(dev, &ci, nullptr, &pool_) ||
        fn<PFN_vkCreateFence>("vkCreateFence")(dev, &fi, nullptr, &fence_))
      return "no command pool or fence to read the clock with";
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    if (fn<PFN_vkAllocateCommandBuffers>("vkAllocateCommandBuffers")(dev, &ai, &cmd_))
      return "no command buffer to read the clock with";
    fn<PFN_vkGetDeviceQueue>("vkGetDeviceQueue")(dev, d_.queue_family, 0, &queue_);
    // Dispatchable objects the layer makes itself carry the loader's table (vk_layer.h).
    if (d_.set_loader_data &&
        (d_.set_loader_data(dev, cmd_) != VK_SUCCESS || d_.set_loader_data(dev, queue_)))
      return "the loader did not take the clock's command buffer";
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    if (fn<PFN_vkBeginCommandBuffer>("vkBeginCommandBuffer")(cmd_, &bi))
      return "recording the clock's command buffer failed";
    fn<PFN_vkCmdBindPipeline>("vkCmdBindPipeline")(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE,
                                                   pipeline_);
    fn<PFN_vkCmdPushConstants>("vkCmdPushConstants")(cmd_, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                                                     8, &d_.scratch_address);
    fn<PFN_vkCmdDispatch>("vkCmdDispatch")(cmd_, 1, 1, 1);
    if (fn<PFN_vkEndCommandBuffer>("vkEndCommandBuffer")(cmd_))
      return "recording the clock's command buffer failed";
    return "";
  }

  // One submit; false if it failed, or if its reading did not arrive within 10 s of the host's
  // time (a loaded machine may run it late; the fence is waited for without a deadline of its
  // own, and the reading is taken only once the shader's write is seen).
  bool sample(Sample &out) {
    if (pending_)
      return false;
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd_;
    auto submit = fn<PFN_vkQueueSubmit>("vkQueueSubmit");
    auto wait = fn<PFN_vkWaitForFences>("vkWaitForFences");
    auto reset = fn<PFN_vkResetFences>("vkResetFences");
    *d_.scratch_host = 0; // the shader writes the clock over it
    out.before = monotonic_ns();
    if (submit(queue_, 1, &si, fence_))
      return false;
    pending_ = true;
    constexpr int64_t kDeadline = 10000000000;
    VkResult r = VK_TIMEOUT;
    while (r == VK_TIMEOUT && monotonic_ns() - out.before < kDeadline)
      r = wait(d_.device, 1, &fence_, VK_TRUE, 100000000ull);
    if (r != VK_SUCCESS)
      return false;
    while ((out.ticks = *d_.scratch_host) == 0 && monotonic_ns() - out.before < kDeadline)
      std::this_thread::yield();
    out.after = monotonic_ns();
    pending_ = false;
    return out.ticks != 0 && reset(d_.device, 1, &fence_) == VK_SUCCESS;
  }

private:
  template <typename F> F fn(const char *name) const {
    return reinterpret_cast<F>(d_.gdpa(d_.device, name));
  }

  const ClockDevice &d_;
  VkShaderModule module_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  bool pending_ = false; // submitted, not seen done
};

// The narrowest of a few samples: the least time between the host's readings and the clock's.
bool narrowest(ClockDispatch &dispatch, Sample &best) {
  bool any = false;
  for (int i = 0; i < 8; ++i) {
    Sample s;
    if (!dispatch.sample(s))
      return any;
    if (!any || s.after - s.before < best.after - best.before)
      best = s;
    any = true;
  }
  return any;
}

// Every reading fits in 32 bits: the clock is taken as 32 bits wide (see clock_model).
bool narrow(const Sample &a, const Sample &b) { return (a.ticks | b.ticks) >> 32 == 0; }

} // namespace

ClockNeeds ClockNeeds::of(uint32_t features) {
  return {(features & abi::DeviceReadsClock) != 0, (features & abi::DeviceReadsCycles) != 0};
}

std::string missing_clock(const ClockNeeds &needs, VkPhysicalDevice pd, bool has_extension,
                          PFN_vkGetPhysicalDeviceFeatures2 features2) {
  if (!needs.any())
    return "";
  const char *reads = needs.device ? "nsecs" : "clock";
  if (!has_extension)
    return std::string("the probes read ") + reads + " and the device has no VK_KHR_shader_clock";
  VkPhysicalDeviceShaderClockFeaturesKHR clock{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR};
  VkPhysicalDeviceFeatures2 f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &clock};
  features2(pd, &f);
  if (needs.device && !clock.shaderDeviceClock)
    return "the probes read nsecs and the device has no shaderDeviceClock (VK_KHR_shader_clock)";
  if (needs.subgroup && !clock.shaderSubgroupClock)
    return "the probes read clock and the device has no shaderSubgroupClock (VK_KHR_shader_clock)";
  return "";
}

// nsecs = t + offset + ((t - base) * rate >> 32) (device_abi.h), rate = tick - 1 ns in Q32: the
// clock whose reading AT is NS_PER_TICK apart.
DeviceClock model_at(const Sample &at, double ns_per_tick) {
  DeviceClock clock;
  clock.base = at.ticks;
  clock.offset_ns = at.middle() - int64_t(at.ticks);
  clock.rate_q32 = std::llround((ns_per_tick - 1.0) * 4294967296.0);
  clock.mask = at.ticks && !(at.ticks >> 32) ? 0xffffffffull : 0; // see clock_model
  return clock;
}

Result<DeviceClock> clock_model(const Sample &first, const Sample &last, double timestamp_period) {
  uint64_t ticks = last.ticks - first.ticks;
  if (narrow(first, last))
    ticks &= 0xffffffffull; // across a wrap of a 32-bit clock too
  double span = double(last.middle() - first.middle());
  if (ticks == 0 || int64_t(ticks) < 0 || span <= 0)
    return make_error("the device clock did not advance");
  double ns_per_tick = span / double(ticks);
  // The nominal tick, where the measurement cannot tell them apart: it does not drift with the
  // submits' latency (NVIDIA's clock is the timestamps' nanoseconds).
  double error = double((first.after - first.before) + (last.after - last.before)) / span;
  if (std::fabs(ns_per_tick / timestamp_period - 1) <= error)
    ns_per_tick = timestamp_period;
  DeviceClock clock = model_at(first, ns_per_tick);
  clock.mask = narrow(first, last) ? 0xffffffffull : 0;
  return clock;
}

DeviceClock rebased_clock(const DeviceClock &clock, int64_t nsecs) {
  // nsecs(t) = t + offset + ((t - base) * rate >> 32): the tick at NSECS, then the offset that
  // keeps nsecs(t) for every t.
  double rate = double(clock.rate_q32) / 4294967296.0;
  double at = double(nsecs - clock.offset_ns - int64_t(clock.base)) / (1.0 + rate);
  int64_t moved = int64_t(std::llround(at));
  DeviceClock out = clock;
  out.base = clock.base + uint64_t(moved);
  out.offset_ns = clock.offset_ns + int64_t((__int128(moved) * clock.rate_q32) >> 32);
  return out;
}

DeviceClock measure_device_clock(const ClockDevice &d, std::string &why, std::string &note) {
  ClockDispatch dispatch(d);
  why = dispatch.create();
  note.clear();
  if (!why.empty())
    return {};
  Sample best; // the narrowest reading seen, for the lower-accuracy model
  bool any = false;
  std::string last_why = "the clock-reading dispatch did not finish";
  for (int window_ms : {20, 100, 500}) {
    Sample first, last;
    bool ok = narrowest(dispatch, first);
    std::this_thread::sleep_for(std::chrono::milliseconds(window_ms));
    ok = narrowest(dispatch, last) && ok;
    for (const Sample *s : {&first, &last})
      if (s->ticks && (!any || s->after - s->before < best.after - best.before)) {
        best = *s;
        any = true;
      }
    if (!ok)
      continue;
    auto model = clock_model(first, last, d.timestamp_period);
    if (model)
      return *model;
    last_why = model.error();
  }
  note = "nsecs is less accurate: " + last_why + " over readings 20, 100 and 500 ms apart (a busy "
         "machine?), so the clock's tick is taken as the device's timestampPeriod (" +
         std::to_string(d.timestamp_period) + " ns)";
  if (any)
    return model_at(best, d.timestamp_period);
  note += "; no reading came back: nsecs is the device's raw clock";
  return model_at({}, d.timestamp_period);
}

} // namespace gpubt::runtime::vulkan
