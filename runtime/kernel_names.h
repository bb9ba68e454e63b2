// kname() values: a host stub address or a driver handle -> the kernel's demangled name.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/map_data.h"

namespace gpubt::runtime {

// c++filt's rendering ("scale(float*, int)"); NAME itself when it is not a mangled C++ name.
std::string demangle_symbol(std::string_view name);

// The demangled name SYMBOLIZE gives ADDR, without "+0x.." offsets; "0x..." when unknown.
std::string kernel_name(uint64_t addr, const Symbolizer &symbolize);

// A Symbolizer that first looks ADDR up in the kernel-names map (u64 handle -> mangled name,
// abi::ProgramSpec::kernel_names_map) at NAMES_FD (if >= 0), then asks BASE, and where BASE
// knows no function there, looks for a data object of process PID (HIP's kernel handles).
Symbolizer with_kernel_names(Symbolizer base, int names_fd, int pid);

// Saves PID's file mappings (all of them, data too) for object lookups after it exits.
void remember_file_mappings(int pid);

} // namespace gpubt::runtime
