// A program's compute pipeline, made again with another shader (see pipeline_recipe.h).
#include "runtime/vulkan/pipeline_recipe.h"

#include "runtime/vulkan/vk_chain.h"

namespace gpubt::runtime::vulkan {

PipelineRecipe::PipelineRecipe(const VkComputePipelineCreateInfo &info,
                               std::shared_ptr<const std::vector<uint32_t>> code)
    : code_(std::move(code)), entry_(info.stage.pName ? info.stage.pName : ""),
      // A derivative's base may be gone: the twin stands alone.
      flags_(info.flags & ~VkPipelineCreateFlags(VK_PIPELINE_CREATE_DERIVATIVE_BIT)),
      stage_flags_(info.stage.flags), layout_(info.layout) {
  if (const VkSpecializationInfo *s = info.stage.pSpecializationInfo) {
    has_spec_ = true;
    spec_entries_.assign(s->pMapEntries, s->pMapEntries + s->mapEntryCount);
    auto *data = static_cast<const uint8_t *>(s->pData);
    spec_data_.assign(data, data + s->dataSize);
  }
  if (auto *r = find_chain<VkPipelineShaderStageRequiredSubgroupSizeCreateInfo>(
          info.stage.pNext,
          VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO))
    required_subgroup_size_ = r->requiredSubgroupSize;
}

VkResult make_pipeline_with_code(VkDevice device, const PipelineFns &fns,
                                 const VkComputePipelineCreateInfo &info, VkPipelineCache cache,
                                 const VkAllocationCallbacks *alloc,
                                 const std::vector<uint32_t> &code, VkPipeline *out) {
  VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = code.size() * 4;
  mi.pCode = code.data();
  VkShaderModule module = VK_NULL_HANDLE;
  if (VkResult r = fns.create_module(device, &mi, nullptr, &module); r != VK_SUCCESS)
    return r;
  VkComputePipelineCreateInfo mine = info;
  mine.stage.module = module;
  VkResult r = fns.create_pipelines(device, cache, 1, &mine, alloc, out);
  fns.destroy_module(device, module, nullptr); // a pipeline keeps what it needs of it
  return r;
}

VkResult PipelineRecipe::make(VkDevice device, const PipelineFns &fns,
                              const std::vector<uint32_t> &code, VkPipeline *out) const {
  VkSpecializationInfo spec{uint32_t(spec_entries_.size()), spec_entries_.data(),
                            spec_data_.size(), spec_data_.data()};
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo subgroup{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO, nullptr,
      required_subgroup_size_.value_or(0)};
  VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.flags = flags_;
  info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  info.stage.pNext = required_subgroup_size_ ? &subgroup : nullptr;
  info.stage.flags = stage_flags_;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.pName = entry_.c_str();
  info.stage.pSpecializationInfo = has_spec_ ? &spec : nullptr;
  info.layout = layout_;
  info.basePipelineIndex = -1;
  return make_pipeline_with_code(device, fns, info, VK_NULL_HANDLE, nullptr, code, out);
}

} // namespace gpubt::runtime::vulkan
