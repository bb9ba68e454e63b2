// OBJECT symbols through libelf, located in a process through /proc/PID/maps.
#include "runtime/process/object_symbols.h"

#include <cinttypes>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <gelf.h>
#include <libelf.h>
#include <map>
#include <mutex>
#include <unistd.h>
#include <vector>

namespace gpubt::runtime {

// HIP passes a kernel's "function address" as the address of a data object named like the
// kernel (hip_calls: `_Z5scalePfi` is D, in .data), which function symbolizers do not cover:
// look it up among the OBJECT symbols of the file mapped there.
namespace {

struct FileMapping {
  uint64_t start, end, pgoff;
  std::string path;
};

std::mutex g_mu;
std::map<int, std::vector<FileMapping>> g_mappings; // saved while the process was alive

std::vector<FileMapping> read_file_mappings(int pid) {
  std::vector<FileMapping> out;
  std::ifstream f("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(f, line)) {
    FileMapping m{};
    int path_at = 0;
    if (sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n", &m.start, &m.end,
               &m.pgoff, &path_at) < 3 ||
        path_at <= 0 || size_t(path_at) >= line.size() || line[path_at] != '/')
      continue;
    m.path = line.substr(path_at);
    out.push_back(std::move(m));
  }
  return out;
}

struct ObjectSymbol {
  uint64_t file_offset, size;
  std::string name;
};

// OBJECT symbols with their file offsets (through every PT_LOAD), cached per file.
const std::vector<ObjectSymbol> &object_symbols(const std::string &path) {
  static std::map<std::string, std::vector<ObjectSymbol>> cache;
  auto [it, inserted] = cache.try_emplace(path);
  if (!inserted)
    return it->second;
  elf_version(EV_CURRENT);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return it->second;
  Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  std::vector<GElf_Phdr> loads;
  size_t nph = 0;
  if (elf && elf_getphdrnum(elf, &nph) == 0)
    for (size_t i = 0; i < nph; ++i) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD)
        loads.push_back(ph);
    }
  Elf_Scn *scn = nullptr;
  while (elf && (scn = elf_nextscn(elf, scn))) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
      continue;
    Elf_Data *data = elf_getdata(scn, nullptr);
    for (size_t i = 0; data && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_OBJECT ||
          sym.st_shndx == SHN_UNDEF)
        continue;
      const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
      for (const auto &ph : loads)
        if (name && sym.st_value >= ph.p_vaddr && sym.st_value < ph.p_vaddr + ph.p_filesz)
          it->second.push_back(
              {sym.st_value - ph.p_vaddr + ph.p_offset, std::max<uint64_t>(sym.st_size, 1), name});
    }
  }
  if (elf)
    elf_end(elf);
  close(fd);
  return it->second;
}

} // namespace

std::string object_symbol(int pid, uint64_t addr) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<FileMapping> live = read_file_mappings(pid);
  const auto &maps = live.empty() ? g_mappings[pid] : live;
  for (const auto &m : maps) {
    if (addr < m.start || addr >= m.end)
      continue;
    uint64_t off = addr - m.start + m.pgoff;
    for (const auto &s : object_symbols(m.path))
      if (off >= s.file_offset && off < s.file_offset + s.size)
        return s.name;
    return "";
  }
  return "";
}

void remember_file_mappings(int pid) {
  auto maps = read_file_mappings(pid);
  std::lock_guard<std::mutex> lock(g_mu);
  if (!maps.empty())
    g_mappings[pid] = std::move(maps);
}

} // namespace gpubt::runtime
