// Matches function patterns against ELF symbols; caches each file's symbols for the session.
#include "runtime/process/symbols.h"
#include "runtime/process/binary_paths.h"
#include <algorithm>
#include <fnmatch.h>
#include <map>
#include <memory>
#include <mutex>

namespace gpubt::runtime {
namespace {

// Lower is better: global, then fewer leading underscores, then shorter, then by name.
auto alias_rank(const ElfSymbol &s) {
  size_t underscores = s.name.find_first_not_of('_');
  return std::make_tuple(!s.global, underscores, s.name.size(), s.name);
}

} // namespace

bool has_wildcard(const std::string &pattern) {
  return pattern.find_first_of("*?[") != std::string::npos;
}

bool match_wildcard(const std::string &pattern, const std::string &name) {
  return fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

std::vector<ElfSymbol> match_functions(const std::vector<ElfSymbol> &symbols,
                                       const std::string &pattern) {
  std::map<uint64_t, const ElfSymbol *> by_addr;
  bool wild = has_wildcard(pattern);
  for (const auto &s : symbols) {
    if (wild ? !match_wildcard(pattern, s.name) : s.name != pattern)
      continue;
    auto [it, inserted] = by_addr.emplace(s.vaddr, &s);
    if (!inserted && alias_rank(s) < alias_rank(*it->second))
      it->second = &s;
  }
  std::vector<ElfSymbol> out;
  for (auto &[_, s] : by_addr)
    out.push_back(*s);
  std::sort(out.begin(), out.end(),
            [](const ElfSymbol &a, const ElfSymbol &b) { return a.name < b.name; });
  return out;
}

Result<const std::vector<ElfSymbol> *> cached_elf_functions(const std::string &path) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<std::vector<ElfSymbol>>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(path);
  if (it != cache.end())
    return it->second.get();
  auto syms = read_elf_functions(path);
  if (!syms)
    return make_error(syms.error());
  auto &slot = cache[path];
  slot = std::make_unique<std::vector<ElfSymbol>>(std::move(*syms));
  return slot.get();
}

Result<std::vector<UprobeTarget>> resolve_uprobe_targets(const std::string &target,
                                                         const std::string &func_pattern, int pid) {
  auto path = resolve_binary_path(target, pid);
  if (!path)
    return make_error(path.error());
  auto elf = is_elf_file(*path);
  if (!elf)
    return make_error("uprobe target file " + elf.error());
  if (!*elf)
    return make_error("uprobe target file '" + target + "' is not an ELF file");
  auto syms = cached_elf_functions(*path);
  if (!syms)
    return make_error(syms.error());
  std::vector<UprobeTarget> out;
  for (auto &s : match_functions(**syms, func_pattern))
    out.push_back(UprobeTarget{*path, s.name, s.file_offset});
  return out;
}

std::string no_symbols_message(const std::string &probe_name) {
  return probe_name + ": no symbols matched";
}

} // namespace gpubt::runtime
