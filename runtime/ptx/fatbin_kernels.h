// The kernels in a fatbin (every cubin's and PTX entry's, by name) and which gpubt backend each
// could get on a GPU: the PTX backend, SASS patching, or none (`gpubt -l 'gpu:*'`).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/abi/result.h"

namespace gpubt::runtime::ptx {

struct FatbinKernel {
  std::string name;                 // as in the cubin's symbols and the PTX (mangled)
  std::vector<uint32_t> ptx_archs;  // compute_XX of the PTX entries that define it
  std::vector<uint32_t> sass_archs; // sm_XX of the cubins that define it
};

enum class KernelBackend { Ptx, Sass, None };

// The kernels of BYTES (one container or a .nv_fatbin section of several), in the order they
// first appear. Errors: read_fatbin's, and an entry that cannot be decompressed.
Result<std::vector<FatbinKernel>> fatbin_kernels(std::span<const uint8_t> bytes);

// On a GPU of architecture SM (90 for sm_90): Ptx when PTX for SM or an older architecture has
// the kernel (the driver can JIT it), else Sass when a cubin that runs on SM has it, else None.
KernelBackend kernel_backend(const FatbinKernel &kernel, uint32_t sm);

// A cubin built for CUBIN_SM runs on a GPU of GPU_SM: same major version, minor not newer.
bool sass_runs_on(uint32_t cubin_sm, uint32_t gpu_sm);

const char *backend_name(KernelBackend backend); // "ptx", "sass", "none"

} // namespace gpubt::runtime::ptx
