// What it takes to make a program's compute pipeline again with the probes in its shader, after
// the program made it: a pipeline gets a name (vkSetDebugUtilsObjectNameEXT) only once it
// exists, and its shader module may be gone by then. The recipe keeps the shader's code, its
// entry point, specialization constants, required subgroup size and layout.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <vulkan/vulkan.h>

namespace gpubt::runtime::vulkan {

// The device functions making a twin pipeline takes (the next layer's).
struct PipelineFns {
  PFN_vkCreateShaderModule create_module = nullptr;
  PFN_vkDestroyShaderModule destroy_module = nullptr;
  PFN_vkCreateComputePipelines create_pipelines = nullptr;
};

// INFO's pipeline with a module of CODE in place of its own (the rest of INFO as the program gave
// it): VK_SUCCESS or the driver's error.
VkResult make_pipeline_with_code(VkDevice device, const PipelineFns &fns,
                                 const VkComputePipelineCreateInfo &info, VkPipelineCache cache,
                                 const VkAllocationCallbacks *alloc,
                                 const std::vector<uint32_t> &code, VkPipeline *out);

class PipelineRecipe {
public:
  PipelineRecipe(const VkComputePipelineCreateInfo &info,
                 std::shared_ptr<const std::vector<uint32_t>> code);

  const std::vector<uint32_t> &code() const { return *code_; }
  const std::string &entry() const { return entry_; }
  VkPipelineLayout layout() const { return layout_; }

  // The pipeline again with CODE as its shader, the layer's own (no cache, no allocator);
  // VK_SUCCESS or the driver's error.
  VkResult make(VkDevice device, const PipelineFns &fns, const std::vector<uint32_t> &code,
                VkPipeline *out) const;

private:
  std::shared_ptr<const std::vector<uint32_t>> code_;
  std::string entry_;
  VkPipelineCreateFlags flags_ = 0;
  VkPipelineShaderStageCreateFlags stage_flags_ = 0;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  std::vector<VkSpecializationMapEntry> spec_entries_;
  std::vector<uint8_t> spec_data_;
  bool has_spec_ = false;
  std::optional<uint32_t> required_subgroup_size_;
};

} // namespace gpubt::runtime::vulkan
