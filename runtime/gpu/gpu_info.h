// The GPU section of `gpubt --info`: for each GPU API, the part gpubt needs and whether this
// machine has it (CUDA agent, ptxas, CUDA driver and its GPUs; Vulkan layer and loader).
#pragma once
#include <cstdio>
#include <string>
#include <vector>

namespace gpubt::runtime {

struct GpuPart {
  std::string name;  // "CUDA agent"
  bool found = false;
  std::string detail; // the path or version found, else what is missing and how to get it
};

std::vector<GpuPart> gpu_parts();

// "GPU\n  CUDA agent: yes (PATH)\n  ..." in --info's layout.
void print_gpu_info(std::FILE *out);

} // namespace gpubt::runtime
