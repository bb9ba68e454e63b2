// /proc/kallsyms, read once: kernel addresses to names (kstack) and names to addresses (kaddr).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gpubt::runtime {

struct KernelSymbol {
  uint64_t address = 0;
  bool text = false; // a function (t, T, w, W): what a stack's return addresses fall in
  std::string name;
};

// Every symbol with a nonzero address, sorted by address; empty where kallsyms hides addresses
// (kptr_restrict shows them all as 0).
const std::vector<KernelSymbol> &kernel_symbols();

// "vfs_read+18" for an address inside a kernel function, as bpftrace prints kstack frames; the
// address in hex where kallsyms hides addresses or has no function below it.
std::string kernel_symbol_at(uint64_t address);

} // namespace gpubt::runtime
