// The architectures of this machine's GPUs, as the agent's probe cubins and `-l 'gpu:*'` need
// them: "sm_90" strings.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpubt::runtime {

struct GpuArchs {
  std::vector<std::string> archs; // "sm_90", each once; empty when nothing said
  std::string source;             // "GPUBT_GPU_ARCH", "the CUDA driver" or "nvidia-smi"
};

// GPUBT_GPU_ARCH ("sm_90,sm_80"), else the CUDA driver's compute capabilities (libcuda.so.1,
// loaded in this process), else nvidia-smi's; empty when none answers (no GPU, no driver).
GpuArchs machine_gpu_archs();

// "sm_90" or "sm_90a" -> 90; nullopt for anything else.
std::optional<uint32_t> parse_sm_arch(const std::string &arch);

} // namespace gpubt::runtime
