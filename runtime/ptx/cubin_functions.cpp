// A bounds-checked walk of the ELF section headers and the symbol table; nothing else of the
// cubin is read.
#include "runtime/ptx/cubin_functions.h"

#include <cstring>
#include <elf.h>

namespace gpubt::runtime::ptx {
namespace {

// st_other of a kernel (a __global__ function): what cuobjdump shows as STO_ENTRY.
constexpr unsigned char kStoCudaEntry = 0x10;

struct ElfView {
  const unsigned char *bytes;
  size_t size;
  Elf64_Ehdr eh;

  bool open() {
    if (!bytes || size < sizeof eh)
      return false;
    std::memcpy(&eh, bytes, sizeof eh);
    return std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
           eh.e_shentsize == sizeof(Elf64_Shdr) && eh.e_shoff <= size &&
           (size - eh.e_shoff) / sizeof(Elf64_Shdr) >= eh.e_shnum && eh.e_shstrndx < eh.e_shnum;
  }
  Elf64_Shdr section(size_t i) const {
    Elf64_Shdr sh;
    std::memcpy(&sh, bytes + eh.e_shoff + i * sizeof sh, sizeof sh);
    return sh;
  }
  bool inside(const Elf64_Shdr &sh) const {
    return sh.sh_offset <= size && size - sh.sh_offset >= sh.sh_size;
  }
  // The NUL-terminated string at OFFSET of string table STRTAB; empty when out of bounds.
  std::string string_at(const Elf64_Shdr &strtab, size_t offset) const {
    if (offset >= strtab.sh_size)
      return {};
    const char *s = reinterpret_cast<const char *>(bytes + strtab.sh_offset + offset);
    return std::string(s, strnlen(s, strtab.sh_size - offset));
  }
};

// The named symbols of every symbol table, in order, for which KEEP is true.
template <class Keep>
std::optional<std::vector<std::string>> symbol_names(const void *image, size_t size, Keep keep) {
  ElfView elf{static_cast<const unsigned char *>(image), size, {}};
  if (!elf.open())
    return std::nullopt;
  std::vector<std::string> out;
  for (size_t i = 0; i < elf.eh.e_shnum; ++i) {
    Elf64_Shdr symtab = elf.section(i);
    if (symtab.sh_type != SHT_SYMTAB || symtab.sh_link >= elf.eh.e_shnum || !elf.inside(symtab))
      continue;
    Elf64_Shdr strtab = elf.section(symtab.sh_link);
    if (!elf.inside(strtab))
      continue;
    for (size_t off = 0; off + sizeof(Elf64_Sym) <= symtab.sh_size; off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, elf.bytes + symtab.sh_offset + off, sizeof sym);
      if (!keep(sym))
        continue;
      if (std::string name = elf.string_at(strtab, sym.st_name); !name.empty())
        out.push_back(std::move(name));
    }
  }
  return out;
}

} // namespace

std::optional<std::vector<std::string>> cubin_functions(const void *image, size_t size) {
  ElfView elf{static_cast<const unsigned char *>(image), size, {}};
  if (!elf.open())
    return std::nullopt;
  Elf64_Shdr names = elf.section(elf.eh.e_shstrndx);
  if (!elf.inside(names))
    return std::nullopt;
  std::vector<std::string> out;
  for (size_t i = 0; i < elf.eh.e_shnum; ++i) {
    std::string name = elf.string_at(names, elf.section(i).sh_name);
    if (name.rfind(".text.", 0) == 0)
      out.push_back(name.substr(6));
  }
  return out;
}

std::optional<std::vector<std::string>> cubin_symbols(const void *image, size_t size) {
  return symbol_names(image, size, [](const Elf64_Sym &) { return true; });
}

std::optional<std::vector<std::string>> cubin_kernels(const void *image, size_t size) {
  return symbol_names(image, size, [](const Elf64_Sym &sym) {
    return ELF64_ST_TYPE(sym.st_info) == STT_FUNC && (sym.st_other & kStoCudaEntry) &&
           sym.st_shndx != SHN_UNDEF;
  });
}

} // namespace gpubt::runtime::ptx
