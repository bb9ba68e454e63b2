// Kernel and C++ symbol names as people read them: c++filt's demangling, and a kname() value
// (a symbolized address) shortened to the kernel's signature.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/abi/map_data.h"

namespace gpubt::runtime {

// c++filt's rendering ("scale(float*, int)"); NAME itself when it is not a mangled C++ name.
std::string demangle_symbol(std::string_view name);

// The demangled name SYMBOLIZE gives ADDR, without "+0x.." offsets; "0x..." when unknown.
std::string kernel_name(uint64_t addr, const Symbolizer &symbolize);

} // namespace gpubt::runtime
