// kname() values: a host stub address or a driver handle -> the kernel's mangled name.
#pragma once
#include "runtime/abi/map_data.h"

namespace gpubt::runtime {

// A Symbolizer that first looks ADDR up in the kernel-names map (u64 handle -> mangled name,
// abi::ProgramSpec::kernel_names_map) at NAMES_FD (if >= 0), then asks BASE, and where BASE
// knows no function there, looks for a data object of process PID (HIP's kernel handles).
Symbolizer with_kernel_names(Symbolizer base, int names_fd, int pid);

} // namespace gpubt::runtime
