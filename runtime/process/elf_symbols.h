// Function symbols of one ELF file (.symtab and .dynsym) with the file offsets uprobes need.
#pragma once
#include "runtime/abi/result.h"
#include <cstdint>
#include <string>
#include <vector>

namespace gpubt::runtime {

struct ElfSymbol {
  std::string name;
  uint64_t vaddr = 0;
  uint64_t size = 0;
  uint64_t file_offset = 0; // where a uprobe on this function goes
  bool global = false;      // STB_GLOBAL (preferred among aliases)
};

// Defined STT_FUNC / STT_GNU_IFUNC symbols, one per name, sorted by name.
// Errors: the file cannot be opened, or is not an ELF file.
Result<std::vector<ElfSymbol>> read_elf_functions(const std::string &path);

// Whether `path` is an ELF file (reads only the magic); an error when it cannot be opened.
Result<bool> is_elf_file(const std::string &path); // error: it cannot be opened

} // namespace gpubt::runtime
