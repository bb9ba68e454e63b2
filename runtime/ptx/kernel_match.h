// Which gpu probes a kernel belongs to: its mangled name, full demangled signature or demangled
// base name ("vectorAdd") against each probe's pattern ('*', '?' wildcards).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/abi/program_spec.h"

namespace gpubt::runtime::ptx {

struct KernelNames {
  std::string mangled, demangled, base; // equal when the name is not mangled
};

KernelNames kernel_names(const std::string &name);
bool kernel_matches(const std::string &pattern, const KernelNames &names);
// Bit N set when probes[N] matches (probes beyond 64 are never selected).
uint64_t probe_mask(const std::vector<abi::DeviceProbeSpec> &probes, const KernelNames &names);

} // namespace gpubt::runtime::ptx
