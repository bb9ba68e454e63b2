// Library and executable lookup for uprobe targets and -c commands.
#include "runtime/process/binary_paths.h"
#include "runtime/process/symbols.h"
#include <algorithm>
#include <array>
#include <cstring>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace gpubt::runtime {
namespace {

bool is_regular_file(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string basename_of(const std::string &p) {
  auto slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// "libc" matches libc.so.6 and libc-2.31.so; "libc.so.6" matches only itself.
bool lib_name_matches(const std::string &want, const std::string &file) {
  if (file == want)
    return true;
  auto starts = [&](const std::string &pre) { return file.rfind(pre, 0) == 0; };
  if (want.find(".so") != std::string::npos)
    return false;
  return starts(want + ".so") || starts(want + "-") || starts("lib" + want + ".so");
}

std::string find_in_proc_maps(const std::string &name, int pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    auto slash = line.find('/');
    if (slash == std::string::npos)
      continue;
    std::string path = line.substr(slash);
    if (lib_name_matches(name, basename_of(path)))
      return path;
  }
  return "";
}

// `ldconfig -p` lines: "\tlibc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6".
std::string find_in_ld_cache(const std::string &name) {
  FILE *p = popen("/sbin/ldconfig -p 2>/dev/null", "r");
  if (!p)
    return "";
  std::string found;
  std::array<char, 4096> buf;
  while (fgets(buf.data(), buf.size(), p)) {
    std::string line(buf.data());
    auto arrow = line.find(" => ");
    if (arrow == std::string::npos)
      continue;
    std::istringstream ss(line);
    std::string soname;
    ss >> soname;
    std::string path = line.substr(arrow + 4);
    while (!path.empty() && (path.back() == '\n' || path.back() == ' '))
      path.pop_back();
    if (!lib_name_matches(name, soname))
      continue;
    bool native =
        line.find("x86-64") != std::string::npos || line.find("AArch64") != std::string::npos;
    if (found.empty() || native)
      found = path;
    if (native)
      break;
  }
  pclose(p);
  return found;
}

std::string find_in_lib_dirs(const std::string &name) {
  static const char *dirs[] = {"/lib/x86_64-linux-gnu",
                               "/usr/lib/x86_64-linux-gnu",
                               "/lib64",
                               "/usr/lib64",
                               "/lib",
                               "/usr/lib",
                               "/usr/local/lib"};
  for (const char *d : dirs) {
    for (const std::string &cand : {name, name + ".so", "lib" + name + ".so"}) {
      std::string p = std::string(d) + "/" + cand;
      if (is_regular_file(p))
        return p;
    }
  }
  return "";
}

} // namespace

Result<std::string> find_in_path(const std::string &cmd) {
  if (cmd.find('/') != std::string::npos) {
    if (access(cmd.c_str(), X_OK) == 0 && is_regular_file(cmd))
      return cmd;
    return make_error("'" + cmd + "' does not exist or is not executable");
  }
  const char *env = getenv("PATH");
  std::string path = env ? env : "/usr/local/bin:/usr/bin:/bin";
  std::istringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    std::string p = (dir.empty() ? "." : dir) + "/" + cmd;
    if (access(p.c_str(), X_OK) == 0 && is_regular_file(p))
      return p;
  }
  return make_error("command '" + cmd + "' not found in $PATH");
}

Result<std::string> resolve_binary_path(const std::string &target, int pid) {
  auto not_found = [&] {
    return make_error("uprobe target file '" + target + "' does not exist or is not executable");
  };
  if (target.find('/') != std::string::npos) {
    if (is_regular_file(target))
      return target;
    // -p of a process in another mount namespace: its path, seen through its root.
    std::string in_root = "/proc/" + std::to_string(pid) + "/root" + target;
    if (pid > 0 && target[0] == '/' && is_regular_file(in_root))
      return in_root;
    return not_found();
  }
  std::string p;
  if (pid > 0)
    p = find_in_proc_maps(target, pid);
  if (p.empty())
    p = find_in_ld_cache(target);
  if (p.empty())
    p = find_in_lib_dirs(target);
  if (p.empty()) {
    auto r = find_in_path(target);
    if (r)
      p = *r;
  }
  if (p.empty())
    return not_found();
  return p;
}

} // namespace gpubt::runtime

// GPU library aliases: what ld.so would load for the traced program, found without running it.
namespace gpubt::runtime {
namespace {

struct GpuAlias {
  const char *alias;
  const char *prefix; // basename prefix of the library file: maps show the resolved real file
  const char *soname; // what the system search looks for first
  const char *static_marker; // a symbol whose presence means the executable links it statically
};
constexpr GpuAlias kGpuAliases[] = {
    {"cudart", "libcudart.so", "libcudart.so", "cudaMalloc"},
    {"cuda", "libcuda.so", "libcuda.so.1", nullptr},
    {"hip", "libamdhip64.so", "libamdhip64.so", nullptr},
    {"nccl", "libnccl.so", "libnccl.so.2", nullptr}, // PyTorch's own: nvidia/nccl/lib, dlopen'ed
    {"rccl", "librccl.so", "librccl.so.1", nullptr}, // ROCm's NCCL
    // PyTorch's CUDA caching allocator (torch/lib, loaded by `import torch`)
    {"c10_cuda", "libc10_cuda.so", "libc10_cuda.so", nullptr},
};

bool has_prefix(const std::string &s, const char *prefix) { return s.rfind(prefix, 0) == 0; }

std::vector<std::string> split_dirs(const std::string &s) {
  std::vector<std::string> out;
  std::istringstream ss(s);
  std::string d;
  while (std::getline(ss, d, ':'))
    if (!d.empty())
      out.push_back(d);
  return out;
}

struct DynamicInfo {
  std::vector<std::string> needed;
  std::string rpath, runpath;
};

DynamicInfo read_dynamic(const std::string &path) {
  DynamicInfo info;
  elf_version(EV_CURRENT);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return info;
  Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  Elf_Scn *scn = nullptr;
  while (elf && (scn = elf_nextscn(elf, scn))) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
      continue;
    Elf_Data *data = elf_getdata(scn, nullptr);
    for (size_t i = 0; data && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; ++i) {
      GElf_Dyn dyn;
      if (!gelf_getdyn(data, i, &dyn))
        continue;
      const char *s = nullptr;
      if (dyn.d_tag == DT_NEEDED || dyn.d_tag == DT_RPATH || dyn.d_tag == DT_RUNPATH)
        s = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
      if (!s)
        continue;
      if (dyn.d_tag == DT_NEEDED)
        info.needed.push_back(s);
      else
        (dyn.d_tag == DT_RPATH ? info.rpath : info.runpath) = s;
    }
  }
  if (elf)
    elf_end(elf);
  close(fd);
  return info;
}

// ld.so's order: DT_RPATH (without DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH, the cache, the
// default dirs; then CUDA's usual home, which a system without ld.so.conf entries may lack.
std::string find_library_file(const std::string &name, const std::string &exe,
                              const DynamicInfo &dyn) {
  std::string origin = exe.substr(0, exe.rfind('/'));
  auto expand = [&](std::string d) {
    for (const char *tok : {"$ORIGIN", "${ORIGIN}"})
      if (auto at = d.find(tok); at != std::string::npos)
        d.replace(at, strlen(tok), origin);
    return d;
  };
  std::vector<std::string> dirs;
  if (dyn.runpath.empty())
    for (auto &d : split_dirs(dyn.rpath))
      dirs.push_back(expand(d));
  if (const char *env = getenv("LD_LIBRARY_PATH"))
    for (auto &d : split_dirs(env))
      dirs.push_back(d);
  for (auto &d : split_dirs(dyn.runpath))
    dirs.push_back(expand(d));
  for (const auto &d : dirs)
    if (is_regular_file(d + "/" + name))
      return d + "/" + name;
  if (std::string p = find_in_ld_cache(name); !p.empty())
    return p;
  for (const char *d : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
                        "/usr/lib64", "/lib", "/usr/lib", "/usr/local/cuda/lib64",
                        "/usr/local/cuda/lib"})
    if (is_regular_file(std::string(d) + "/" + name))
      return std::string(d) + "/" + name;
  return "";
}

std::string find_in_maps_by_prefix(int pid, const char *prefix) {
  auto files = mapped_files_with_prefix(pid, prefix);
  return files.empty() ? "" : files.front();
}

bool links_statically(const std::string &exe, const char *marker) {
  if (!marker || exe.empty())
    return false;
  auto syms = cached_elf_functions(exe);
  if (!syms)
    return false;
  for (const auto &s : **syms) // LOCAL symbols of .symtab count: static cudart's API is local
    if (s.name == marker)
      return true;
  return false;
}

} // namespace

std::vector<std::string> mapped_files_with_prefix(int pid, const std::string &prefix) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::vector<std::string> files;
  std::string line;
  while (std::getline(maps, line)) {
    auto slash = line.find('/');
    if (slash == std::string::npos || !has_prefix(basename_of(line.substr(slash)), prefix.c_str()))
      continue;
    if (std::find(files.begin(), files.end(), line.substr(slash)) == files.end())
      files.push_back(line.substr(slash));
  }
  return files;
}

std::vector<std::string> linked_libraries(const std::string &exe) {
  std::vector<std::string> found;
  std::vector<std::string> seen_names;
  std::vector<std::string> queue{exe};
  for (size_t i = 0; i < queue.size(); ++i) {
    DynamicInfo dyn = read_dynamic(queue[i]);
    for (const auto &name : dyn.needed) {
      if (std::find(seen_names.begin(), seen_names.end(), name) != seen_names.end())
        continue;
      seen_names.push_back(name);
      // $ORIGIN in a library's RUNPATH is that library's folder, as ld.so reads it.
      if (std::string p = find_library_file(name, queue[i], dyn); !p.empty()) {
        found.push_back(p);
        queue.push_back(p);
      }
    }
  }
  return found;
}

const char *gpu_library_prefix(const std::string &target) {
  for (const auto &g : kGpuAliases)
    if (target == g.alias)
      return g.prefix;
  return nullptr;
}

std::string program_interpreter(const std::string &exe) {
  elf_version(EV_CURRENT);
  int fd = open(exe.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return "";
  std::string interp;
  Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  size_t count = 0;
  if (elf && elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &count) == 0) {
    for (size_t i = 0; i < count; ++i) {
      GElf_Phdr ph;
      if (!gelf_getphdr(elf, int(i), &ph) || ph.p_type != PT_INTERP)
        continue;
      size_t size = 0;
      const char *raw = elf_rawfile(elf, &size);
      if (raw && ph.p_offset + ph.p_filesz <= size && ph.p_filesz > 1)
        interp.assign(raw + ph.p_offset, strnlen(raw + ph.p_offset, ph.p_filesz));
    }
  }
  if (elf)
    elf_end(elf);
  close(fd);
  return interp;
}

std::optional<Result<std::string>> resolve_gpu_library(const std::string &target, int pid,
                                                       const std::string &exe_in,
                                                       bool *from_system) {
  if (from_system)
    *from_system = false;
  const GpuAlias *a = nullptr;
  for (const auto &g : kGpuAliases)
    if (target == g.alias)
      a = &g;
  if (!a)
    return std::nullopt;
  std::string exe = exe_in;
  if (exe.empty() && pid > 0) {
    char buf[4096];
    ssize_t n = readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), buf, sizeof buf - 1);
    if (n > 0)
      exe.assign(buf, n);
  }
  if (links_statically(exe, a->static_marker))
    return Result<std::string>(exe);
  if (pid > 0)
    if (std::string p = find_in_maps_by_prefix(pid, a->prefix); !p.empty())
      return Result<std::string>(p);
  DynamicInfo dyn = exe.empty() ? DynamicInfo{} : read_dynamic(exe);
  for (const auto &n : dyn.needed)
    if (has_prefix(n, a->prefix))
      if (std::string p = find_library_file(n, exe, dyn); !p.empty())
        return Result<std::string>(p);
  if (std::string p = find_library_file(a->soname, exe, dyn); !p.empty()) {
    if (from_system)
      *from_system = true;
    return Result<std::string>(p);
  }
  return Result<std::string>(make_error(
      "uprobe target '" + target + "': no " + a->prefix + "* found" +
      (exe.empty() ? std::string(" in the system's library paths")
                   : " for " + exe + (std::string(a->alias) == "cudart"
                                          ? " (nor is cudart linked into it statically)"
                                          : ""))));
}

} // namespace gpubt::runtime
