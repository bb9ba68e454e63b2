// LLVM 22's SPIR-V back end cannot emit what a Vulkan probe needs: its Vulkan flavour has no
// 64-bit atomics ("Unable to meet SPIR-V requirements") and no PhysicalStorageBuffer pointers.
// The target therefore lowers atomics to calls of placeholder functions and addresses device
// memory as StorageBuffer; this rewrite of the emitted words turns both into what Vulkan takes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/abi/result.h"

namespace gpubt::targets {

// Placeholder `i64/i32 NAME<opcode>_<bits>[_acq_rel](ptr, args...)`: the SPIR-V atomic opcode in
// its name; a read-modify-write is relaxed unless the name ends in kAcqRelSuffix.
inline const char *kAtomicPlaceholder = "gpubt_spv_atomic_";
inline const char *kAcqRelSuffix = "_acq_rel";
// Placeholder `i64 NAME<scope>()`: OpReadClockKHR of that scope (SPV_KHR_shader_clock), which
// LLVM's Vulkan flavour does not take as __spirv_ReadClockKHR.
inline const char *kClockPlaceholder = "gpubt_spv_clock_";

// The module's StorageBuffer pointers become PhysicalStorageBuffer64 ones, placeholder calls
// become atomics (device scope) or clock reads, placeholders are removed. Errors name what did not fit.
Result<std::vector<uint32_t>> to_vulkan_flavour(const std::vector<uint32_t> &words);

} // namespace gpubt::targets
