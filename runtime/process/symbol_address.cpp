// Symbol lookups by name through libelf and /proc/kallsyms.
#include "runtime/process/symbol_address.h"
#include "runtime/process/kernel_symbols.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstring>

namespace gpubt::runtime {
namespace {

std::optional<SymbolAddress> find_in_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr &sh,
                                           const std::string &name) {
  Elf_Data *data = elf_getdata(scn, nullptr);
  if (!data || sh.sh_entsize == 0)
    return std::nullopt;
  for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; ++i) {
    GElf_Sym sym;
    if (!gelf_getsym(data, int(i), &sym) || sym.st_shndx == SHN_UNDEF)
      continue;
    const char *n = elf_strptr(elf, sh.sh_link, sym.st_name);
    if (n && name == n)
      return SymbolAddress{sym.st_value, sym.st_size};
  }
  return std::nullopt;
}

} // namespace

std::optional<SymbolAddress> elf_symbol_address(const std::string &path, const std::string &name) {
  elf_version(EV_CURRENT);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  std::optional<SymbolAddress> found;
  if (Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr)) {
    for (Elf64_Word want : {SHT_SYMTAB, SHT_DYNSYM}) {
      Elf_Scn *scn = nullptr;
      while (!found && (scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) && sh.sh_type == want)
          found = find_in_table(elf, scn, sh, name);
      }
    }
    elf_end(elf);
  }
  close(fd);
  return found;
}

std::optional<SymbolAddress> kernel_symbol_address(const std::string &name) {
  for (const auto &s : kernel_symbols())
    if (s.name == name)
      return SymbolAddress{s.address, 0};
  return std::nullopt;
}

} // namespace gpubt::runtime
