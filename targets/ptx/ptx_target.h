// The PTX device target (LLVM's NVPTX back end).
#pragma once
#include <memory>

#include "codegen/device_target.h"

namespace gpubt::targets {

// Null when this LLVM has no NVPTX back end (the driver says so to the user).
std::unique_ptr<codegen::DeviceTarget> make_ptx_target(const codegen::TargetOptions &options);

} // namespace gpubt::targets
