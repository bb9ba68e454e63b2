// The Vulkan layer's hooks on shader modules, compute pipelines and dispatches: probes linked
// into the compute entry points they match by SPIR-V name at vkCreateShaderModule; a twin
// pipeline with them, bound in its place, for one a program names (vkSetDebugUtilsObjectNameEXT)
// as they match; dispatches counted per probe as they are recorded.
#pragma once
#include <vulkan/vulkan.h>

namespace gpubt::runtime::vulkan {

// The hook for device function NAME, or nullptr where this file has none.
PFN_vkVoidFunction pipeline_function(const char *name);

} // namespace gpubt::runtime::vulkan
