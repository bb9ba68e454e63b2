// Addresses of data and function symbols by name, for uaddr() and kaddr(): an ELF file's
// symbol tables, and the kernel's /proc/kallsyms.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace gpubt::runtime {

struct SymbolAddress {
  uint64_t address = 0;
  uint64_t size = 0; // bytes; 0 where the table does not say (kallsyms)
};

// A defined symbol of the ELF file at `path` (any type), as its tables give it.
std::optional<SymbolAddress> elf_symbol_address(const std::string &path, const std::string &name);

// A kernel symbol from /proc/kallsyms; nullopt if absent or hidden (kptr_restrict shows 0).
std::optional<SymbolAddress> kernel_symbol_address(const std::string &name);

} // namespace gpubt::runtime
