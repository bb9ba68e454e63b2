// The functions a loaded module holds, read from its cubin's section names (".text.<name>"), so
// the agent patches only modules with a matching kernel.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gpubt::agent {

// nullopt when the image is not a 64-bit ELF cubin (the caller then patches regardless).
std::optional<std::vector<std::string>> cubin_functions(const void *image, size_t size);

} // namespace gpubt::agent
