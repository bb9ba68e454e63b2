// One section of an ELF file, mapped (private, never copied): the .nv_fatbin of a program or
// library (libtorch_cuda.so's is most of its gigabyte).
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "runtime/abi/result.h"

namespace gpubt::runtime {

struct MappedSection {
  std::shared_ptr<const void> mapping; // the whole file; bytes point into it
  std::span<const uint8_t> bytes;      // empty when the file has no such section
  bool found = false;
};

// Section NAME of the ELF file at PATH. Errors: the file cannot be opened or mapped, or it is not
// an ELF file (each naming PATH).
Result<MappedSection> map_elf_section(const std::string &path, const std::string &name);

} // namespace gpubt::runtime
