// Kernel addresses to names for kstack: /proc/kallsyms, read once.
#pragma once
#include <cstdint>
#include <string>

namespace gpubt::runtime {

// "vfs_read+18" for an address inside a kernel function, as bpftrace prints kstack frames; the
// address in hex where kallsyms hides addresses (kptr_restrict) or has no symbol below it.
std::string kernel_symbol_at(uint64_t address);

} // namespace gpubt::runtime
