// Finds the files of a usdt target and filters their notes' probes.
#include "runtime/process/usdt_probes.h"
#include "runtime/process/binary_paths.h"
#include "runtime/process/symbols.h"
#include "runtime/process/usdt_notes.h"
#include <algorithm>
#include <glob.h>
#include <tuple>
#include <sys/stat.h>
#include <unistd.h>

namespace gpubt::runtime {
namespace {

bool is_elf(const std::string &path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return false;
  auto elf = is_elf_file(path);
  return elf && *elf;
}

std::vector<std::string> glob_elf_files(const std::string &pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i)
      if (is_elf(g.gl_pathv[i]))
        out.push_back(g.gl_pathv[i]);
  globfree(&g);
  return out;
}

// A mapped file as gpubt can open it: the process may live in another mount namespace.
std::string openable(int pid, const std::string &path) {
  if (access(path.c_str(), R_OK) == 0)
    return path;
  return "/proc/" + std::to_string(pid) + "/root" + path;
}

} // namespace

Result<std::vector<std::string>> target_files(const std::string &target, int pid) {
  if (target.empty()) {
    if (pid <= 0)
      return make_error("usdt probes without a file need a process: -p PID or -c CMD");
    std::vector<std::string> out;
    for (const auto &f : mapped_files_with_prefix(pid, ""))
      if (std::string p = openable(pid, f); is_elf(p))
        out.push_back(p);
    return out;
  }
  if (has_wildcard(target))
    return glob_elf_files(target);
  auto path = resolve_binary_path(target, pid);
  if (!path)
    return make_error(path.error());
  return std::vector<std::string>{*path};
}

Result<std::vector<abi::UsdtSite>> find_usdt_sites(const std::string &target,
                                                   const std::string &provider,
                                                   const std::string &name, int pid) {
  auto files = target_files(target, pid);
  if (!files)
    return make_error(files.error());
  bool strict = !target.empty() && !has_wildcard(target);
  std::vector<abi::UsdtSite> out;
  for (const auto &file : *files) {
    auto sites = read_usdt_sites(file);
    if (!sites) {
      if (strict)
        return make_error(sites.error());
      continue;
    }
    size_t first = out.size();
    for (auto &s : *sites)
      if ((provider.empty() || match_wildcard(provider, s.provider)) &&
          match_wildcard(name, s.name))
        out.push_back(std::move(s));
    // By provider and name, as bpftrace orders (and lists) them; a name's sites in note order.
    std::stable_sort(out.begin() + first, out.end(), [](const auto &a, const auto &b) {
      return std::tie(a.provider, a.name) < std::tie(b.provider, b.name);
    });
  }
  return out;
}

} // namespace gpubt::runtime
