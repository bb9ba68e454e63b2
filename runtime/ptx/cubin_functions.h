// What a loaded module's cubin holds: its functions (section names ".text.<name>"), so the agent
// patches only modules with a matching kernel, and its symbols (a PTX-backend image is known by
// its userdata array's name).
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gpubt::runtime::ptx {

// nullopt when the image is not a 64-bit ELF cubin (the caller then patches regardless).
std::optional<std::vector<std::string>> cubin_functions(const void *image, size_t size);

// The names in the cubin's symbol table; nullopt when it is not a 64-bit ELF.
std::optional<std::vector<std::string>> cubin_symbols(const void *image, size_t size);

// The kernels (__global__ functions: defined STT_FUNC symbols marked as entries) of a cubin, in
// symbol table order; nullopt when it is not a 64-bit ELF.
std::optional<std::vector<std::string>> cubin_kernels(const void *image, size_t size);

} // namespace gpubt::runtime::ptx
