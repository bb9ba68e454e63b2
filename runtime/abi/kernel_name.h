// The name a kernel has on the device (`kernel`, map keys, timeline spans): at most
// GPUBT_KERNEL_NAME_SIZE - 1 bytes. A longer name keeps its first 50 bytes, then '~' and 12 hex
// digits of a 64-bit hash of the whole name, so two kernels that differ after the cut never
// share a key (cuBLAS's and JAX's names run past 63 characters, and differ at the end).
#pragma once

#include <string>
#include <string_view>

namespace gpubt::abi {

inline constexpr size_t kKernelNameKept = 50;

std::string device_kernel_name(std::string_view full);

} // namespace gpubt::abi
