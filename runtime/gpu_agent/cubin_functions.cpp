// A bounds-checked walk of the ELF section headers; nothing else of the cubin is read.
#include "runtime/gpu_agent/cubin_functions.h"

#include <cstring>
#include <elf.h>

namespace gpubt::agent {

std::optional<std::vector<std::string>> cubin_functions(const void *image, size_t size) {
  const auto *bytes = static_cast<const unsigned char *>(image);
  Elf64_Ehdr eh;
  if (!image || size < sizeof eh)
    return std::nullopt;
  std::memcpy(&eh, bytes, sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > size ||
      (size - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum || eh.e_shstrndx >= eh.e_shnum)
    return std::nullopt;
  auto section = [&](size_t i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, bytes + eh.e_shoff + i * sizeof sh, sizeof sh);
    return sh;
  };
  Elf64_Shdr strtab = section(eh.e_shstrndx);
  if (strtab.sh_offset > size || size - strtab.sh_offset < strtab.sh_size)
    return std::nullopt;
  const char *names = reinterpret_cast<const char *>(bytes + strtab.sh_offset);
  std::vector<std::string> out;
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh = section(i);
    if (sh.sh_name >= strtab.sh_size)
      continue;
    std::string name(names + sh.sh_name, strnlen(names + sh.sh_name, strtab.sh_size - sh.sh_name));
    if (name.rfind(".text.", 0) == 0)
      out.push_back(name.substr(6));
  }
  return out;
}

} // namespace gpubt::agent
