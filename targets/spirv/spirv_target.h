// The SPIR-V device target (LLVM's SPIR-V back end), in two flavours.
#pragma once
#include <memory>

#include "codegen/device_target.h"

namespace gpubt::targets {

enum class SpirvFlavour {
  Vulkan, // Shader capability, PhysicalStorageBuffer64 pointers: linked into compute shaders
  OpenCL, // Kernel capability, Physical64: linked into OpenCL / Level Zero kernels
};

// Null when this LLVM has no SPIR-V back end (the driver says so to the user).
std::unique_ptr<codegen::DeviceTarget> make_spirv_target(SpirvFlavour flavour);

} // namespace gpubt::targets
