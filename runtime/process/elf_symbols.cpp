// Reads function symbols through libelf and maps their addresses to file offsets through the
// PT_LOAD program headers (a uprobe is placed by file offset, not by address).
#include "runtime/process/elf_symbols.h"
#include "runtime/process/fd_limit.h"
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <map>
#include <unistd.h>

namespace gpubt::runtime {
namespace {

struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0)
      close(fd);
  }
};
struct ElfGuard {
  Elf *elf;
  ~ElfGuard() {
    if (elf)
      elf_end(elf);
  }
};

bool vaddr_to_offset(const std::vector<GElf_Phdr> &loads, uint64_t vaddr, uint64_t &off) {
  for (const auto &ph : loads) {
    if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
      off = vaddr - ph.p_vaddr + ph.p_offset;
      return true;
    }
  }
  return false;
}

void read_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr &sh, const std::vector<GElf_Phdr> &loads,
                 std::map<std::string, ElfSymbol> &out) {
  Elf_Data *data = elf_getdata(scn, nullptr);
  if (!data || sh.sh_entsize == 0)
    return;
  size_t count = sh.sh_size / sh.sh_entsize;
  for (size_t i = 0; i < count; ++i) {
    GElf_Sym sym;
    if (!gelf_getsym(data, i, &sym))
      continue;
    int type = GELF_ST_TYPE(sym.st_info);
    if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
        sym.st_value == 0)
      continue;
    const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
    if (!name || !*name)
      continue;
    ElfSymbol s;
    s.name = name;
    s.vaddr = sym.st_value;
    s.size = sym.st_size;
    s.global = GELF_ST_BIND(sym.st_info) == STB_GLOBAL;
    if (!vaddr_to_offset(loads, s.vaddr, s.file_offset))
      continue;
    out.emplace(s.name, std::move(s)); // .symtab comes first and wins over .dynsym
  }
}

// Out of descriptors (many probes) says so, with the limit: not "not an ELF file".
std::string open_error(const std::string &path, int err) {
  return "cannot open '" + path + "': " + error_text(err);
}

} // namespace

Result<bool> is_elf_file(const std::string &path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) // EMFILE with many probes must not read as "not an ELF file"
    return make_error(open_error(path, errno));
  char magic[4] = {};
  bool ok = read(fd, magic, 4) == 4 && memcmp(magic, ELFMAG, SELFMAG) == 0;
  close(fd);
  return ok;
}

Result<std::vector<ElfSymbol>> read_elf_functions(const std::string &path) {
  elf_version(EV_CURRENT);
  FdGuard fd{open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (fd.fd < 0)
    return make_error(open_error(path, errno));
  ElfGuard elf{elf_begin(fd.fd, ELF_C_READ_MMAP, nullptr)};
  if (!elf.elf || elf_kind(elf.elf) != ELF_K_ELF)
    return make_error("'" + path + "' is not an ELF file");

  size_t nph = 0;
  elf_getphdrnum(elf.elf, &nph);
  std::vector<GElf_Phdr> loads;
  for (size_t i = 0; i < nph; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf.elf, i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
      loads.push_back(ph);
  }

  std::map<std::string, ElfSymbol> byname;
  for (Elf64_Word want : {SHT_SYMTAB, SHT_DYNSYM}) {
    Elf_Scn *scn = nullptr;
    while ((scn = elf_nextscn(elf.elf, scn))) {
      GElf_Shdr sh;
      if (gelf_getshdr(scn, &sh) && sh.sh_type == want)
        read_symtab(elf.elf, scn, sh, loads, byname);
    }
  }
  std::vector<ElfSymbol> out;
  out.reserve(byname.size());
  for (auto &[_, s] : byname)
    out.push_back(std::move(s));
  return out;
}

} // namespace gpubt::runtime
