#include "runtime/abi/kernel_name.h"

#include <cstdint>
#include <cstdio>

#include "runtime/abi/device_abi.h"

namespace gpubt::abi {

std::string device_kernel_name(std::string_view full) {
  if (full.size() < GPUBT_KERNEL_NAME_SIZE)
    return std::string(full);
  uint64_t h = 0xcbf29ce484222325ull; // FNV-1a, then MurmurHash3's finalizer
  for (unsigned char ch : full)
    h = (h ^ ch) * 0x100000001b3ull;
  h = gpubt_fmix64(h);
  char tail[16];
  std::snprintf(tail, sizeof tail, "~%012llx",
                static_cast<unsigned long long>(h & 0xffffffffffffull));
  return std::string(full.substr(0, kKernelNameKept)) + tail;
}

} // namespace gpubt::abi
