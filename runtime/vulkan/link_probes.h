// Puts gpu probes into a compute shader module: each matching GLCompute entry point calls its
// probes' SPIR-V functions (runtime/abi/device_abi.h) at entry or before every return, with its
// workgroup builtins, and the probe module is linked in (SPIRV-Tools' linker).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/abi/probe_point.h"
#include "runtime/abi/result.h"

namespace gpubt::runtime::vulkan {

struct ProbeCall {
  std::string function; // "gpubt_probe_N_direct"
  abi::ProbePoint point; // Entry: at entry; Exit: before every return (the points linked here)
};

struct EntryProbes {
  std::string entry;        // the entry point's name
  uint64_t ctx_address = 0; // its gpubt_device_ctx (buffer device address)
  std::vector<ProbeCall> calls;
};

// The GLCompute entry point names of MODULE (empty if it is not SPIR-V).
std::vector<std::string> compute_entry_points(const std::vector<uint32_t> &module);

// MODULE with the probes of each of ENTRIES linked in. Errors say what did not fit; the caller
// keeps MODULE as it was.
Result<std::vector<uint32_t>> link_probes(const std::vector<uint32_t> &module,
                                          const std::vector<uint32_t> &probes,
                                          const std::vector<EntryProbes> &entries,
                                          uint32_t subgroup_size);

} // namespace gpubt::runtime::vulkan
