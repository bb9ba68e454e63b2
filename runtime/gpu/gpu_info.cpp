// What --info says of the GPU parts: each looked for as a gpu probe run looks for it.
#include "runtime/gpu/gpu_info.h"

#include <dlfcn.h>
#include <unistd.h>

#include "runtime/gpu/gpu_arch.h"
#include "runtime/gpu/gpu_inject.h"
#include "runtime/gpu/injector.h"
#include "runtime/vulkan/layer_names.h"

namespace gpubt::runtime {
namespace {

// libcuda.so.1's path and version ("13.0"), loaded as gpu_arch.cpp loads it; empty if absent.
GpuPart cuda_driver() {
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!cuda)
    return {"CUDA driver", false, "no libcuda.so.1 (the NVIDIA driver is not installed)"};
  std::string detail = "libcuda.so.1";
  Dl_info info{};
  if (auto sym = dlsym(cuda, "cuDriverGetVersion"); sym && dladdr(sym, &info) && info.dli_fname)
    detail = info.dli_fname;
  using Version = int (*)(int *);
  int v = 0;
  if (auto get = reinterpret_cast<Version>(dlsym(cuda, "cuDriverGetVersion")); get && get(&v) == 0)
    detail += ", CUDA " + std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
  return {"CUDA driver", true, detail}; // stays loaded, as in gpu_arch.cpp
}

GpuPart vulkan_loader() {
  void *vk = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!vk)
    return {"Vulkan loader", false, "no libvulkan.so.1 (Debian: libvulkan1)"};
  dlclose(vk);
  return {"Vulkan loader", true, "libvulkan.so.1"};
}

} // namespace

std::vector<GpuPart> gpu_parts() {
  std::vector<GpuPart> parts;
  auto agent = find_agent_library();
  parts.push_back({"CUDA agent", bool(agent), agent ? *agent : agent.error()});
  std::string ptxas = find_ptxas();
  bool have_ptxas = access(ptxas.c_str(), X_OK) == 0;
  parts.push_back({"ptxas", have_ptxas,
                   have_ptxas ? ptxas
                              : "no " + ptxas + " (the CUDA toolkit's; set GPUBT_PTXAS or PATH)"});
  parts.push_back(cuda_driver());
  GpuArchs archs = machine_gpu_archs();
  std::string list;
  for (const auto &a : archs.archs)
    list += (list.empty() ? "" : ", ") + a;
  parts.push_back({"GPU architecture", !archs.archs.empty(),
                   archs.archs.empty() ? "none found (no GPU or driver): gpu probes assume sm_90; "
                                         "GPUBT_GPU_ARCH or --gpu-arch picks another"
                                       : list + ", from " + archs.source});
  auto layer = make_vulkan_injector()->find();
  parts.push_back({"Vulkan layer", bool(layer),
                   layer ? *layer + "/" + kVulkanLayerManifest : layer.error()});
  parts.push_back(vulkan_loader());
  return parts;
}

void print_gpu_info(std::FILE *out) {
  std::fprintf(out, "GPU\n");
  for (const auto &p : gpu_parts())
    std::fprintf(out, p.found ? "  %s: yes (%s)\n" : "  %s: no: %s\n", p.name.c_str(),
                 p.detail.c_str());
  std::fprintf(out, "  gpu probes in CUDA programs need the CUDA agent, ptxas and the driver; in "
                    "Vulkan programs the Vulkan layer and loader\n\n");
}

} // namespace gpubt::runtime
