// The section headers are read with libelf; the section's bytes come from a private mapping of
// the whole file, so only the pages a reader touches are read from disk.
#include "runtime/process/elf_section.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/abi/unique_fd.h"

namespace gpubt::runtime {

Result<MappedSection> map_elf_section(const std::string &path, const std::string &name) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid())
    return make_error("cannot open '" + path + "': " + strerror(errno));
  struct stat st;
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    return make_error("'" + path + "' is not a regular file");
  if (st.st_size == 0)
    return make_error("'" + path + "' is not an ELF file");
  // Writable but private: libelf may fix up headers in place; the file never changes.
  void *map = mmap(nullptr, size_t(st.st_size), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd.get(), 0);
  if (map == MAP_FAILED)
    return make_error("cannot map '" + path + "': " + strerror(errno));
  size_t size = size_t(st.st_size);
  MappedSection out;
  out.mapping = std::shared_ptr<const void>(
      map, [size](const void *p) { munmap(const_cast<void *>(p), size); });
  elf_version(EV_CURRENT);
  Elf *elf = elf_memory(static_cast<char *>(map), size);
  if (!elf || elf_kind(elf) != ELF_K_ELF) {
    if (elf)
      elf_end(elf);
    return make_error("'" + path + "' is not an ELF file");
  }
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) {
    elf_end(elf);
    return make_error("'" + path + "' is not an ELF file (no section names)");
  }
  for (Elf_Scn *scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh))
      continue;
    const char *sname = elf_strptr(elf, shstrndx, sh.sh_name);
    if (!sname || name != sname || sh.sh_type == SHT_NOBITS)
      continue;
    if (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset)
      break; // a section past the end of the file: treated as absent
    out.bytes =
        std::span<const uint8_t>(static_cast<const uint8_t *>(map) + sh.sh_offset, sh.sh_size);
    out.found = true;
    break;
  }
  elf_end(elf);
  return out;
}

} // namespace gpubt::runtime
