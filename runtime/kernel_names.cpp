// Demangling with the C++ runtime's own demangler (what c++filt uses), and the kernel-names
// map lookup for CUfunction/CUkernel handles learned by codegen's hidden probes.
#include "runtime/kernel_names.h"

#include <bpf/bpf.h>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <fcntl.h>
#include <fstream>
#include <gelf.h>
#include <libelf.h>
#include <map>
#include <mutex>
#include <unistd.h>
#include <vector>

#include "runtime/abi/program_spec.h"

namespace gpubt::runtime {

std::string demangle_symbol(std::string_view name) {
  if (name.substr(0, 2) != "_Z")
    return std::string(name);
  int status = 0;
  std::string mangled(name);
  char *out = ::abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !out)
    return mangled;
  std::string s(out);
  free(out);
  return s;
}

std::string kernel_name(uint64_t addr, const Symbolizer &symbolize) {
  std::string s = symbolize ? symbolize(addr) : "";
  if (s.empty()) {
    char buf[32];
    snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(addr));
    return buf;
  }
  if (s.rfind("0x", 0) == 0)
    return s;
  if (auto plus = s.rfind("+0x"); plus != std::string::npos)
    s.resize(plus);
  return demangle_symbol(s);
}

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

} // namespace

void remember_file_mappings(int pid) {
  auto maps = read_file_mappings(pid);
  std::lock_guard<std::mutex> lock(g_mu);
  if (!maps.empty())
    g_mappings[pid] = std::move(maps);
}

Symbolizer with_kernel_names(Symbolizer base, int names_fd, int pid) {
  return [base = std::move(base), names_fd, pid](uint64_t addr) -> std::string {
    char name[abi::kKernelNameSize] = {};
    if (names_fd >= 0 && bpf_map_lookup_elem(names_fd, &addr, name) == 0 && name[0])
      return std::string(name, strnlen(name, sizeof name));
    std::string s = base(addr);
    if (pid > 0 && s.rfind("0x", 0) == 0)
      if (std::string obj = object_symbol(pid, addr); !obj.empty())
        return obj;
    return s;
  };
}

} // namespace gpubt::runtime
